"""Iceberg's Java API reached from a Spark session: the one place a table name becomes an
`org.apache.iceberg.Table`, so every caller sees the same table state."""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession


def load_table(spark: SparkSession, name: str) -> Any:
    """The Iceberg Java table behind a Spark table name, loaded from its catalog (not a cached copy
    when the catalog's cache is off, as icelab pins it)."""
    return spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)


def current_snapshot_id(spark: SparkSession, name: str) -> int | None:
    """The table's current snapshot id (None for a table with no snapshot).

    The current snapshot is what the metadata names, not the newest commit: after a rollback the two
    differ, which is why this reads the table rather than `<table>.snapshots` by commit time.
    """
    snapshot = load_table(spark, name).currentSnapshot()
    return None if snapshot is None else int(snapshot.snapshotId())
