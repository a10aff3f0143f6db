"""Manifest profiles: table states over the same data files, side by side.

A profile other than `as_ingested` is its own Iceberg table, registered from the as-ingested
table's current metadata file (`register_table`: no data is copied or rewritten), then
`rewrite_manifests` at the profile's target manifest size. Data files stay shared, so a copy is
only ever dropped without PURGE and never expired. Hadoop path-based tables cannot relocate
metadata, so the copy's rewritten manifests are written under the original table's metadata/
directory, where the original does not reference them: `remove_orphan_files` on the original
would delete them and break the copies.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import SparkSession

from icelab.core import failpoints, locks
from icelab.core.config import ProfileConfig
from icelab.core.iceberg import current_snapshot_id, load_table
from icelab.datagen.dataset import Dataset

SIGNATURE = "icelab.profile"


@dataclass(frozen=True)
class Profile:
    """One table state: a manifest layout, and whether old snapshots are expired.

    Attributes:
        name: e.g. `as_ingested`, `rewrite_8mb`, `expired`.
        target_bytes: manifest target size for rewrite_manifests; None keeps the layout.
        expire: expire every snapshot but the current one (metadata only, see `expire`).
    """

    name: str
    target_bytes: int | None = None
    expire: bool = False

    @classmethod
    def of(cls, name: str, cfg: ProfileConfig) -> Profile:
        """The profile a `conf/profile/` entry describes."""
        return cls(name, cfg.target_bytes, cfg.expire_snapshots)

    @property
    def is_original(self) -> bool:
        """Whether this state is the dataset's own table, untouched."""
        return self.target_bytes is None and not self.expire


def current_metadata_file(spark: SparkSession, table: str) -> str:
    """Path of the table's current metadata.json."""
    row = spark.sql(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1").first()
    return row.file


def profile_table(dataset: Dataset, profile: Profile) -> str:
    """Table name holding a profile's state."""
    if profile.is_original:
        return dataset.iceberg_table
    return f"{dataset.catalog}.bench.events_{profile.name}"


def _properties(spark: SparkSession, table: str) -> dict[str, str]:
    return {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def prepare(spark: SparkSession, dataset: Dataset, profile: Profile) -> str:
    """Make (or reuse) the profile's table state and return its table name."""
    table = profile_table(dataset, profile)
    if profile.is_original:
        return table
    # Two runs making the same copy at once would drop and register it under each other.
    with locks.exclusive(f"{locks.key_of(dataset.uri)}#{table}", f"profile table {table}"):
        return _prepare(spark, dataset, profile, table)


def _prepare(spark: SparkSession, dataset: Dataset, profile: Profile, table: str) -> str:
    source_snapshot = current_snapshot_id(spark, dataset.iceberg_table)
    signature = f"source={source_snapshot};target={profile.target_bytes}"
    if profile.expire:
        signature += ";expired"
    if spark.catalog.tableExists(table) and _properties(spark, table).get(SIGNATURE) == signature:
        return table
    if table == dataset.iceberg_table:  # a Hadoop-catalog drop deletes the table's directory
        raise RuntimeError(f"profile '{profile.name}' would replace the dataset's own table {table}")
    spark.sql(f"DROP TABLE IF EXISTS {table}")  # never PURGE: data files are shared
    short = table.split(".", 1)[1]
    spark.sql(
        f"CALL {dataset.catalog}.system.register_table(table => '{short}', "
        f"metadata_file => '{current_metadata_file(spark, dataset.iceberg_table)}')"
    )
    if profile.target_bytes is not None:
        spark.sql(
            f"ALTER TABLE {table} SET TBLPROPERTIES "
            f"('commit.manifest.target-size-bytes' = '{profile.target_bytes}')"
        )
        failpoints.point("profile.rewrite")  # the kill tests stop here, or inside the rewrite
        spark.sql(
            f"CALL {dataset.catalog}.system.rewrite_manifests(table => '{short}', use_caching => false)"
        )
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('{SIGNATURE}' = '{signature}')")
    if profile.expire:
        expire(spark, table)
    return table


def expire(spark: SparkSession, table: str) -> None:
    """Expire every snapshot of a profile copy but its current one.

    Metadata only (`cleanExpiredFiles(false)`): the copy shares its manifest lists and data
    files with the original table, so deleting what the copy no longer references would break
    the original. What a reader pays for old snapshots is the larger metadata.json, and that
    is what expiry removes here. `experiments/snapshot_expiry.py` measures a real expiry with
    file deletion on a table of its own.
    """
    loaded = load_table(spark, table)
    now_ms = spark._jvm.java.lang.System.currentTimeMillis()
    loaded.expireSnapshots().expireOlderThan(now_ms).retainLast(1).cleanExpiredFiles(False).commit()
    spark.sql(f"REFRESH TABLE {table}")
