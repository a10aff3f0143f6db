"""The bytes a rewrite writes (icelab/health/manifest_bytes.py): WrittenSizes.java in the driver's
JVM writes the sample the py4j path writes, byte for byte, on tables plain Spark SQL and pyiceberg
wrote and on icelab's own; without javac the py4j path answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core.errors import UserError
from icelab.datagen import pyiceberg_shapes
from icelab.datagen import spark_sql_shapes as shapes
from icelab.health import manifest_bytes
from icelab.health.rewrite import Sizes
from icelab.health.source import connect, load, resolve
from tests.warehouses import own_warehouse

CATALOG = "written_t"


@pytest.fixture(scope="module")
def made(ctx, tmp_path_factory) -> dict[str, str]:  # noqa: ANN001
    """Tables of several shapes, by name: where each is."""
    warehouse = own_warehouse(ctx, tmp_path_factory, "written", CATALOG)
    spark = ctx.spark
    return {
        "fragmented": str(shapes.fragmented(spark, CATALOG, warehouse, "fragmented", appends=5)),
        "spec_evolved": str(shapes.spec_evolved(spark, CATALOG, warehouse, "spec_evolved", appends=2)),
        "identity_and_time": str(shapes.identity_and_time(spark, CATALOG, warehouse, "identity", 3, 3)),
        "position_deletes": str(shapes.merge_on_read(spark, CATALOG, warehouse, "position_deletes")),
        "deletion_vectors": str(shapes.merge_on_read(spark, CATALOG, warehouse, "deletion_vectors", 3)),
        "pyiceberg": pyiceberg_shapes.fragmented(tmp_path_factory.mktemp("written-py"), "py", appends=4),
    }


def both_ways(ctx, where: str, limit: int = manifest_bytes.SAMPLE) -> tuple[Sizes | None, Sizes | None]:  # noqa: ANN001
    """One table's line, through WrittenSizes.java and through py4j."""
    jtable = load(ctx.spark, connect(ctx.spark, ctx.engine, resolve(where)))
    snapshot = int(jtable.currentSnapshot().snapshotId())
    version = int(jtable.operations().current().formatVersion())
    jar = ctx.engine.iceberg_jar
    in_jvm = manifest_bytes.written_in_jvm(ctx.spark, jtable, version, snapshot, limit, jar)
    by_py4j = manifest_bytes.written_by_py4j(ctx.spark, jtable, version, snapshot, limit)
    return in_jvm, by_py4j


def test_the_jvm_writes_what_py4j_writes_on_tables_others_wrote(ctx, made, monkeypatch):  # noqa: ANN001
    # Two manifests at most, so that the sample skips manifests (the step) on every table here.
    monkeypatch.setattr(manifest_bytes, "MANIFESTS", 2)
    for name, where in made.items():
        for limit in (manifest_bytes.SAMPLE, 7):
            in_jvm, by_py4j = both_ways(ctx, where, limit)
            assert in_jvm is not None and in_jvm == by_py4j, (name, limit, in_jvm, by_py4j)
            assert in_jvm.per_entry > 1.0 and in_jvm.overhead > 0, (name, in_jvm)


def test_the_jvm_writes_what_py4j_writes_on_icelabs_own_table(ctx, tiny):  # noqa: ANN001
    in_jvm, by_py4j = both_ways(ctx, tiny.dataset.iceberg_uri.removeprefix("file://"))
    assert in_jvm is not None and in_jvm == by_py4j


def test_another_sample_gives_another_line(ctx, made):  # noqa: ANN001
    """The equality above can fail: fewer entries sampled write other bytes."""
    in_jvm, _ = both_ways(ctx, made["fragmented"])
    _, fewer = both_ways(ctx, made["fragmented"], limit=3)
    assert in_jvm != fewer


def test_without_javac_the_sample_goes_through_py4j(ctx, made, monkeypatch):  # noqa: ANN001
    in_jvm, _ = both_ways(ctx, made["fragmented"])

    def no_javac(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise UserError("javac not found: the doctor's manifest bytes needs a JDK 17 (javac on PATH)")

    monkeypatch.setattr(manifest_bytes.javac, "compiled", no_javac)
    jtable = load(ctx.spark, connect(ctx.spark, ctx.engine, resolve(made["fragmented"])))
    snapshot = int(jtable.currentSnapshot().snapshotId())
    fallback = manifest_bytes.written_sizes(ctx.spark, jtable, 2, snapshot, jar_name=ctx.engine.iceberg_jar)
    assert fallback == in_jvm


def test_a_table_of_one_entry_has_no_line(ctx, tmp_path_factory):  # noqa: ANN001
    warehouse = own_warehouse(ctx, tmp_path_factory, "written-one", "written_one")
    ctx.spark.sql(
        "CREATE TABLE written_one.db.one (id bigint, ts timestamp) USING iceberg PARTITIONED BY (days(ts))"
    )
    ctx.spark.sql("INSERT INTO written_one.db.one VALUES (1, timestamp_seconds(1767225600))")
    assert both_ways(ctx, str(Path(warehouse) / "db" / "one")) == (None, None)
