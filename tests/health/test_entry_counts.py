"""The doctor's two entries reads agree: per partition, EntryCounts.java in the driver's JVM
(`icelab/health/entry_counts.py`) sums what Spark's `entries` metadata table sums
(`reader.read_partitions`), on tables plain Spark SQL wrote with every kind of partition value,
two specs, position deletes and deletion vectors, and on icelab's own table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from icelab.core.errors import UserError
from icelab.datagen import pyiceberg_shapes
from icelab.datagen import spark_sql_shapes as shapes
from icelab.health import entry_counts, reader
from icelab.health.entry_counts import read_partitions_jvm, value
from icelab.health.reader import read_partitions, specs_of
from icelab.health.source import connect, load, resolve
from tests.warehouses import own_warehouse

CATALOG = "entries_t"
SMALL = 700  # bytes: every data file here is above it


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "entries", CATALOG)


def every_value_kind(spark, name: str) -> None:
    """A table partitioned by bucket, truncate, hours, and identity on a boolean, a decimal, a
    date and a binary column (a null among them), over three appends."""
    table = f"{CATALOG}.db.{name}"
    spark.sql(
        f"CREATE TABLE {table} (id bigint, s string, ts timestamp, b boolean, d decimal(10,2), "
        "day date, bin binary) USING iceberg "
        "PARTITIONED BY (bucket(4, id), truncate(2, s), hours(ts), b, d, day, bin)"
    )
    for j in range(3):
        spark.sql(
            f"INSERT INTO {table} SELECT id, concat('s', id % 7), timestamp_seconds(1767225600 + id * 5400), "
            "id % 2 = 0, CAST(id % 3 AS decimal(10,2)) / 4, "
            "date_add(DATE '2026-01-01', CAST(id % 2 AS int)), "
            f"IF(id % 5 = 0, NULL, CAST(concat('x', id % 3) AS binary)) FROM range({j * 20}, {j * 20 + 20})"
        )


def files_deleted(spark, warehouse: Path, name: str) -> Path:
    """Three appends over five days, then one day's files deleted whole (copy-on-write): the
    delete's manifest keeps their entries with status DELETED, which are not live."""
    where = shapes.fragmented(spark, CATALOG, warehouse, name, appends=3)
    spark.sql(f"DELETE FROM {CATALOG}.db.{name} WHERE ts < timestamp_seconds({shapes.START_S} + 86400)")
    return where


def tables(spark, warehouse: Path) -> dict[str, Path]:
    every_value_kind(spark, "kinds")
    return {
        "files_deleted": files_deleted(spark, warehouse, "files_deleted"),
        "kinds": warehouse / "db" / "kinds",
        "spec_evolved": shapes.spec_evolved(spark, CATALOG, warehouse, "spec_evolved", appends=2),
        "identity_and_time": shapes.identity_and_time(spark, CATALOG, warehouse, "identity_and_time", 2, 3),
        "unpartitioned": shapes.unpartitioned(spark, CATALOG, warehouse, "unpartitioned", appends=3),
        "position_deletes": shapes.merge_on_read(spark, CATALOG, warehouse, "position_deletes"),
        "deletion_vectors": shapes.merge_on_read(spark, CATALOG, warehouse, "deletion_vectors", 3),
    }


def both(ctx, where: str, small: int = SMALL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The partitions' sums of one table, through Spark and through the driver's JVM, a data file
    below `small` bytes being small."""
    source = connect(ctx.spark, ctx.engine, resolve(where))
    jtable = load(ctx.spark, source)
    specs, default = specs_of(jtable)
    spark_sums = read_partitions(ctx.spark, source, specs, default, small)
    jvm_sums = read_partitions_jvm(
        ctx.spark, jtable, int(jtable.currentSnapshot().snapshotId()), specs, small, ctx.engine.iceberg_jar
    )
    return spark_sums, jvm_sums


def test_the_jvm_sums_what_spark_sums_on_tables_spark_sql_wrote(ctx, warehouse):
    seen = {}
    made = tables(ctx.spark, warehouse)
    # The median data file's size: some files are small, some not.
    small = int(ctx.spark.sql(f"SELECT median(file_size_in_bytes) FROM {CATALOG}.db.kinds.files").first()[0])
    for name, where in made.items():
        spark_sums, jvm_sums = both(ctx, str(where), small)
        assert len(spark_sums) > 0, name
        pd.testing.assert_frame_equal(jvm_sums, spark_sums, check_dtype=False, obj=name)
        # Every data manifest was read from its bytes (Iceberg's reader: the delete manifests).
        read = jvm_sums.attrs["manifests_read"]
        deletes = ctx.spark.sql(
            f"SELECT count(*) FROM {CATALOG}.db.{name}.manifests WHERE content = 1"
        ).first()[0]
        assert read["from_bytes"] > 0 and read["iceberg_reader"] == deletes, (name, read)
        seen[name] = spark_sums
    # The tables hold what they are here for (else the equality above proves little).
    kinds = seen["kinds"]
    assert len(kinds) > 20 and kinds["small_files"].between(1, kinds["files"].sum() - 1).any()
    assert any(k[-1] is None for k in kinds["key"]) and any(isinstance(k[-1], bytes) for k in kinds["key"])
    assert seen["spec_evolved"]["spec_id"].nunique() == 2
    deleted = ctx.spark.sql(
        f"SELECT count(*) FROM {CATALOG}.db.files_deleted.entries WHERE status = 2"
    ).first()[0]
    assert deleted > 0 and seen["files_deleted"]["files"].sum() == 3 * 4
    assert seen["position_deletes"]["position_delete_files"].sum() > 0
    assert seen["deletion_vectors"]["deletion_vectors"].sum() > 0


def test_the_jvm_sums_what_spark_sums_on_icelabs_own_table(ctx, tiny):
    spark_sums, jvm_sums = both(ctx, tiny.dataset.iceberg_uri.removeprefix("file://"))
    assert spark_sums["files"].sum() > 0
    pd.testing.assert_frame_equal(jvm_sums, spark_sums, check_dtype=False)


@pytest.mark.parametrize("codec", ["null", "bzip2"])
def test_manifests_of_any_codec_are_summed_as_spark_sums_them(ctx, tmp_path, codec):
    """pyiceberg writes its manifests with the table's Avro codec. Uncompressed ones are read
    from their bytes (DataManifestScan.java, as deflate ones above); a codec that class does not
    read (bzip2) is read by Iceberg's own reader instead, with the same sums."""
    where = pyiceberg_shapes.fragmented(
        tmp_path, "codec", appends=3, properties={"write.avro.compression-codec": codec}
    )
    metadata = Path(where.removeprefix("file://")).parent
    manifests = [m for m in metadata.glob("*.avro") if not m.name.startswith("snap-")]
    assert manifests and all(
        b"avro.codec" + bytes([2 * len(codec)]) + codec.encode() in m.read_bytes()[:4096] for m in manifests
    )
    spark_sums, jvm_sums = both(ctx, where)
    assert spark_sums["files"].sum() == 3 * 5
    pd.testing.assert_frame_equal(jvm_sums, spark_sums, check_dtype=False)
    by_bytes = codec == "null"
    assert jvm_sums.attrs["manifests_read"] == {
        "from_bytes": 3 if by_bytes else 0,
        "iceberg_reader": 0 if by_bytes else 3,
    }


def test_a_summed_count_out_of_place_is_caught(ctx, warehouse):
    """The comparison above can fail: one partition's files off by one differs."""
    spark_sums, jvm_sums = both(ctx, str(warehouse / "db" / "kinds"))
    jvm_sums.loc[0, "files"] += 1
    with pytest.raises(AssertionError):
        pd.testing.assert_frame_equal(jvm_sums, spark_sums, check_dtype=False)


def test_without_javac_the_doctor_reads_through_spark_and_says_why(ctx, warehouse, monkeypatch):
    def no_javac(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise UserError("javac not found: the doctor's entry counts needs a JDK 17 (javac on PATH)")

    monkeypatch.setattr(entry_counts.javac, "compiled", no_javac)
    source = connect(ctx.spark, ctx.engine, resolve(str(warehouse / "db" / "kinds")))
    meta = reader.read(ctx.spark, source, load(ctx.spark, source), SMALL, ctx.engine.iceberg_jar)
    assert meta.entries_reader == "spark-entries" and "javac not found" in (meta.entries_fallback or "")
    monkeypatch.undo()
    again = reader.read(ctx.spark, source, load(ctx.spark, source), SMALL, ctx.engine.iceberg_jar)
    assert again.entries_reader == "driver-jvm" and again.entries_fallback is None
    pd.testing.assert_frame_equal(again.partitions, meta.partitions, check_dtype=False)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("n", None),
        ("i-3", -3),
        ("b1", True),
        ("b0", False),
        ("f1.5", 1.5),
        ("xAAE=", b"\x00\x01"),
        ("sw6k=", "é"),
    ],
)
def test_tokens_decode_to_internal_values(token, expected):
    assert value(token) == expected
