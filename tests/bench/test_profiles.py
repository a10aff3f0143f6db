"""Manifest profiles: a rewritten copy over the same data files, same rows, other manifests."""

from __future__ import annotations

import pytest

from icelab.bench.profiles import Profile, prepare
from icelab.datagen.verify import Checksums, spark_checksums


def manifests(spark, table: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {table}.manifests").first()[0]


def data_files(spark, table: str) -> set[str]:
    return {r[0] for r in spark.sql(f"SELECT file_path FROM {table}.files").collect()}


@pytest.fixture(scope="module")
def original_checksums(ctx, tiny) -> Checksums:
    """Per-day rows and checksum of tiny's Iceberg table, hashed once for the copies compared with it
    (module alone: 74.2 s hashing it in each test, 69.4 s; the tests assert the original untouched)."""
    return spark_checksums(ctx.spark, tiny.dataset.iceberg_table)


def test_as_ingested_is_the_table_itself(ctx, tiny):
    assert prepare(ctx.spark, tiny.dataset, Profile("as_ingested")) == tiny.dataset.iceberg_table


def test_rewrite_to_one_manifest_keeps_rows_and_files(ctx, tiny, original_checksums):
    spark, original = ctx.spark, tiny.dataset.iceberg_table
    table = prepare(spark, tiny.dataset, Profile("rewrite_64mb", 64 * 1024 * 1024))
    assert table != original
    assert manifests(spark, table) == 1
    assert manifests(spark, original) == tiny.dataset.config.commits  # original untouched
    assert data_files(spark, table) == data_files(spark, original)
    assert spark_checksums(spark, table) == original_checksums


def test_small_target_makes_more_manifests_and_is_reused(ctx, tiny):
    spark = ctx.spark
    table = prepare(spark, tiny.dataset, Profile("rewrite_16kb", 16 * 1024))
    n = manifests(spark, table)
    assert n > tiny.dataset.config.commits
    snapshots = spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0]
    assert prepare(spark, tiny.dataset, Profile("rewrite_16kb", 16 * 1024)) == table
    assert spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0] == snapshots


def test_expired_copy_keeps_one_snapshot_and_the_original_its_history(ctx, tiny, original_checksums):
    spark, original = ctx.spark, tiny.dataset.iceberg_table
    history = spark.sql(f"SELECT count(*) FROM {original}.snapshots").first()[0]
    table = prepare(spark, tiny.dataset, Profile("expired", None, expire=True))
    assert table != original
    assert spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0] == 1
    assert manifests(spark, table) == manifests(spark, original)  # layout as ingested
    # Metadata-only expiry: the original keeps every snapshot, and time travel still reads.
    assert spark.sql(f"SELECT count(*) FROM {original}.snapshots").first()[0] == history
    first = spark.sql(f"SELECT snapshot_id FROM {original}.snapshots ORDER BY committed_at").first()[0]
    assert spark.sql(f"SELECT count(*) FROM {original} VERSION AS OF {first}").first()[0] > 0
    assert spark_checksums(spark, table) == original_checksums
