"""Table variants an experiment compares: the plain Parquet table and one Iceberg table state
per selected profile (`conf/profile/`), each with the session settings it runs under."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.bench.profiles import Profile, prepare
from icelab.core.config import ProfileConfig, SetupConfig, flatten
from icelab.core.errors import UserError
from icelab.core.iceberg import current_snapshot_id
from icelab.core.session import session_settings
from icelab.datagen.dataset import Dataset

NO_PROFILE = "none"


@dataclass(frozen=True)
class Variant:
    """One table as queried.

    Attributes:
        format: `parquet` or `iceberg`.
        profile: the Iceberg profile's name; `none` for Parquet.
        table: the table name queries run against.
        spark_conf: session settings set only while this variant's queries run.
        setup: the reading setup (`conf/setup/`) it stands for, if any.
    """

    format: str
    profile: str
    table: str
    spark_conf: dict[str, str] = field(default_factory=dict)
    setup: str | None = None
    plant: dict[str, float] = field(default_factory=dict)

    def slow_by(self, query_id: str) -> float:
        """The planted slowdown of `query_id` under this variant (SetupConfig.plant), else 0."""
        return self.plant.get(query_id, self.plant.get(query_id.split("_", 1)[0], 0.0))

    @property
    def label(self) -> str:
        """`parquet`, `iceberg/<profile>` or `iceberg/<setup>`: the name on charts and in results."""
        if self.setup is not None:
            return f"{self.format}/{self.setup}"
        return self.format if self.profile == NO_PROFILE else f"{self.format}/{self.profile}"


def settings(spark: SparkSession, variant: Variant) -> AbstractContextManager[None]:
    """Apply a variant's session settings, then restore what was there before."""
    return session_settings(spark, variant.spark_conf)


def variants(
    spark: SparkSession,
    dataset: Dataset,
    profiles: dict[str, ProfileConfig],
    parquet: bool,
    progress: bool = True,
) -> list[Variant]:
    """Prepare every profile's table state (reused when already there) and list the variants."""
    found = [Variant("parquet", NO_PROFILE, dataset.parquet_table)] if parquet else []
    for name, cfg in tqdm(profiles.items(), desc="profiles", unit="profile", disable=not progress):
        table = prepare(spark, dataset, Profile.of(name, cfg))
        found.append(Variant("iceberg", name, table, flatten(cfg.spark_conf)))
    return found


def check_setup_profiles(setups: dict[str, SetupConfig], profiles: dict[str, ProfileConfig]) -> None:
    """Every setup's table state must be among the selected profiles.

    Raises:
        UserError: naming the first setup whose profile is not selected.
    """
    for name, setup in setups.items():
        if setup.profile not in profiles:
            raise UserError(
                f"setup '{name}' needs profile '{setup.profile}', which is not selected "
                f"(selected: {', '.join(profiles)})"
            )


def setup_variants(
    spark: SparkSession,
    dataset: Dataset,
    setups: dict[str, SetupConfig],
    profiles: dict[str, ProfileConfig],
    parquet: bool,
    progress: bool = True,
) -> list[Variant]:
    """Parquet (Spark's defaults) and one Iceberg variant per setup, on its profile's table state.

    Raises:
        UserError: when a setup names a profile that is not selected.
    """
    check_setup_profiles(setups, profiles)
    needed = {s.profile: profiles[s.profile] for s in setups.values()}
    tables = {
        name: prepare(spark, dataset, Profile.of(name, cfg))
        for name, cfg in tqdm(needed.items(), desc="profiles", unit="profile", disable=not progress)
    }
    found = [Variant("parquet", NO_PROFILE, dataset.parquet_table)] if parquet else []
    for name, setup in setups.items():
        conf = flatten(profiles[setup.profile].spark_conf) | flatten(setup.spark_conf)
        found.append(
            Variant("iceberg", setup.profile, tables[setup.profile], conf, setup=name, plant=setup.plant)
        )
    return found


def table_state(spark: SparkSession, variant: Variant) -> dict[str, Any]:
    """What a variant's table looked like when measured: manifests and current snapshot."""
    state: dict[str, Any] = {"table": variant.table, "spark_conf": variant.spark_conf}
    if variant.format == "iceberg":
        row = spark.sql(f"SELECT count(*) AS n, sum(length) AS bytes FROM {variant.table}.manifests").first()
        snapshots = spark.sql(f"SELECT count(*) FROM {variant.table}.snapshots").first()[0]
        snapshot = current_snapshot_id(spark, variant.table)
        state |= {
            "manifests": row.n,
            "manifest_bytes": row.bytes,
            "snapshots": snapshots,
            "snapshot_id": snapshot,
        }
    return state
