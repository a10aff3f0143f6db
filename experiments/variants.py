"""Table variants an experiment compares: the plain Parquet table and one Iceberg table state
per selected profile (`conf/profile/`), each with the session settings it runs under."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyspark.sql import SparkSession
from tqdm import tqdm

from datagen.dataset import Dataset
from experiments.profiles import Profile, prepare
from icelab.config import ProfileConfig, flatten

NO_PROFILE = "none"


@dataclass(frozen=True)
class Variant:
    """One table as queried.

    Attributes:
        format: `parquet` or `iceberg`.
        profile: the Iceberg profile's name; `none` for Parquet.
        table: the table name queries run against.
        spark_conf: session settings set only while this variant's queries run.
    """

    format: str
    profile: str
    table: str
    spark_conf: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """`parquet` or `iceberg/<profile>`: the name on charts and in results."""
        return self.format if self.profile == NO_PROFILE else f"{self.format}/{self.profile}"


@contextmanager
def settings(spark: SparkSession, variant: Variant) -> Iterator[None]:
    """Apply a variant's session settings, then restore what was there before."""
    before = {key: spark.conf.get(key, None) for key in variant.spark_conf}
    for key, value in variant.spark_conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


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
        table = prepare(spark, dataset, Profile(name, cfg.target_bytes))
        found.append(Variant("iceberg", name, table, flatten(cfg.spark_conf)))
    return found
