"""The arrow builder's generator gives Spark's rows, value for value."""

from __future__ import annotations

import numpy as np
import pytest

from icelab.core.config import dataset_config
from icelab.datagen.arrow_events import arrow_schema, rows_table
from icelab.datagen.generate import generate_rows
from icelab.datagen.spark_hash import hash_int, hash_long, signed, start


@pytest.fixture(scope="module")
def wide(compose_cfg):
    # Medium's populations and commits on few rows: every draw, the late tail and the clock skew
    # are exercised, and batch boundaries fall between ids.
    cfg = compose_cfg(
        "dataset=tiny",
        "dataset.rows=600000",
        "dataset.commits=200",
        "dataset.span_days=180",
        "dataset.late_max_days=60",
        "dataset.users=500000",
        "dataset.pages=5000",
        "dataset.products=20000",
    )
    return dataset_config(cfg)


def test_xxhash64_is_sparks(ctx):
    ids = np.array([0, 1, 2**31, 2**40 + 7, 599_999], dtype=np.int64)
    spark = ctx.spark.createDataFrame([(int(i),) for i in ids], "id bigint")
    got = spark.selectExpr("xxhash64(42, id, 3000000000, cast(id % 7 as int)) AS h").collect()
    mine = signed(hash_int(ids % 7, hash_long(3_000_000_000, hash_long(ids, start(42)))))
    assert [r.h for r in got] == mine.tolist()


@pytest.mark.parametrize("lo", [0, 299_990, 599_950], ids=["first batch", "a batch boundary", "last batch"])
def test_the_same_rows_as_spark(ctx, wide, lo):
    spark_rows = generate_rows(ctx.spark, wide, lo, lo + 50, 1)
    schema = arrow_schema(spark_rows.schema)
    expected = spark_rows.orderBy("_id")._collect_as_arrow()
    theirs = {r["_id"]: r for b in expected for r in b.to_pylist()}
    mine = {r["_id"]: r for r in rows_table(wide, np.arange(lo, lo + 50), schema).to_pylist()}
    assert len(mine) == len(theirs) == 50
    differ = [(k, f) for k in theirs for f in theirs[k] if theirs[k][f] != mine[k][f]]
    assert differ == []
