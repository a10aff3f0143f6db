"""The checksum is the same in Spark and DuckDB, ignores row and map-entry order, and
changes when any single value changes."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from icelab.datagen.verify import duckdb_checksums, duckdb_connection, frame_checksums, parquet_source

SCHEMA = StructType(
    [
        StructField("id", LongType()),
        StructField("s", StringType()),
        StructField("ts", TimestampType()),
        StructField("date", DateType()),
        StructField(
            "nested",
            StructType(
                [
                    StructField("a", StructType([StructField("b", DoubleType())])),
                    StructField("flag", BooleanType()),
                    StructField("n", IntegerType()),
                ]
            ),
        ),
        StructField("attrs", MapType(StringType(), StringType())),
        StructField(
            "items",
            ArrayType(StructType([StructField("sku", StringType()), StructField("q", IntegerType())])),
        ),
        StructField(
            "ids",
            MapType(StringType(), ArrayType(StructType([StructField("id", StringType())]))),
        ),
    ]
)
TS = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)
D = dt.date(2026, 1, 2)
ROWS = [
    (1, "x", TS, D, ((12.5,), True, 3), {"k1": "v1", "k2": "v2"}, [("A", 1), ("B", 2)], {"E": [("e1",)]}),
    (2, None, None, D, None, {}, [], {"E": [("e2",), ("e3",)], "C": [("c",)]}),
    (3, "z", TS, D, ((None,), None, None), None, None, None),
    (4, "w", TS, dt.date(2026, 1, 3), ((-0.25,), False, -7), {"k": None}, [None], {}),
]


@pytest.fixture(scope="module")
def frame(ctx):
    return ctx.spark.createDataFrame(ROWS, SCHEMA)


def test_spark_and_duckdb_agree(ctx, frame, tmp_path):
    out = tmp_path / "t"
    frame.write.partitionBy("date").parquet(str(out))
    con = duckdb_connection()
    duck = duckdb_checksums(con, parquet_source(str(out)), SCHEMA)
    assert duck == frame_checksums(frame, SCHEMA)
    assert sum(n for n, _ in duck.values()) == len(ROWS)


def test_row_order_does_not_matter(ctx, frame):
    reordered = ctx.spark.createDataFrame(list(reversed(ROWS)), SCHEMA).repartition(3)
    assert frame_checksums(reordered, SCHEMA) == frame_checksums(frame, SCHEMA)


def test_map_entry_order_does_not_matter(ctx, frame):
    swapped = [ROWS[0][:5] + ({"k2": "v2", "k1": "v1"},) + ROWS[0][6:], *ROWS[1:]]
    assert frame_checksums(ctx.spark.createDataFrame(swapped, SCHEMA), SCHEMA) == frame_checksums(
        frame, SCHEMA
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda r: (r[0], "y", *r[2:]),  # a string
        lambda r: (*r[:4], ((12.51,), True, 3), *r[5:]),  # a nested double
        lambda r: (*r[:6], [("B", 2), ("A", 1)], r[7]),  # array order is data
        lambda r: (*r[:7], {"E": [("e1",), ("e1",)]}),  # an element inside a map of arrays
        lambda r: (r[0], r[1], TS + dt.timedelta(microseconds=1), *r[3:]),  # one microsecond
    ],
)
def test_any_changed_value_changes_the_checksum(ctx, frame, change):
    changed = [change(ROWS[0]), *ROWS[1:]]
    other = frame_checksums(ctx.spark.createDataFrame(changed, SCHEMA), SCHEMA)
    assert other[D] != frame_checksums(frame, SCHEMA)[D]


def test_null_and_empty_differ(ctx):
    empty = [(1, "x", TS, D, None, {}, [], {})]
    null = [(1, "x", TS, D, None, None, None, None)]
    a = frame_checksums(ctx.spark.createDataFrame(empty, SCHEMA), SCHEMA)
    b = frame_checksums(ctx.spark.createDataFrame(null, SCHEMA), SCHEMA)
    assert a != b
