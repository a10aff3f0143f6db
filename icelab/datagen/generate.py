"""Generation: (dataset spec, batch, parallelism) -> a Spark DataFrame of events.

Pure and deterministic: each row is a function of (seed, row id) only, and row ids of a
batch are fixed by the spec, so any parallelism gives the same rows. Writers are separate
(`icelab.datagen.ingest`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from icelab.core.config import DatasetConfig
from icelab.datagen.draws import Draws
from icelab.datagen.events import KEY_COLUMNS, auth_column, event_columns, key_columns
from icelab.datagen.timeline import batch_rows

# The modules that decide the rows: their source is part of the dataset hash, so a change
# to generation can never reuse data built by the old code.
GENERATOR_SOURCES = ("draws.py", "timeline.py", "events.py", "generate.py")


def generator_fingerprint() -> str:
    """sha256 over the generator's source files."""
    digest = hashlib.sha256()
    for name in GENERATOR_SOURCES:
        digest.update((Path(__file__).with_name(name)).read_bytes())
    return digest.hexdigest()


def partition_columns(ds: DatasetConfig) -> list[str]:
    """The Hive-style partition columns of the Parquet table (`date`, then `hour`)."""
    return ["date", "hour"] if ds.partitioning == "hour" else ["date"]


def generate_rows(spark: SparkSession, ds: DatasetConfig, lo: int, hi: int, parallelism: int) -> DataFrame:
    """Events with ids in [lo, hi); each row's batch, and so its time, follows from its id."""
    draws = Draws(ds.seed)
    base = spark.range(lo, hi, 1, parallelism)
    keyed = base.selectExpr(*key_columns(ds, draws)).selectExpr("*", auth_column(draws))
    events = keyed.selectExpr(*event_columns(ds, draws))
    extra = ["to_date(timestamp) AS date"]
    if ds.partitioning == "hour":
        extra.append("hour(timestamp) AS hour")
    out = events.selectExpr("*", *extra)
    assert not set(KEY_COLUMNS) & set(out.columns)
    return out


def generate_batch(
    spark: SparkSession, ds: DatasetConfig, batch: int, parallelism: int | None = None
) -> DataFrame:
    """One ingest batch (one commit) of the dataset."""
    lo, hi = batch_rows(ds, batch)
    return generate_rows(spark, ds, lo, hi, parallelism or ds.parallelism)


def generate_all(spark: SparkSession, ds: DatasetConfig, parallelism: int | None = None) -> DataFrame:
    """Every row of the dataset in one frame (the same rows as all batches together)."""
    return generate_rows(spark, ds, 0, ds.total_rows, parallelism or ds.parallelism)
