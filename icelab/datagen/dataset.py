"""A dataset's identity and place: `data/<name>-<config-hash>/`, and its two tables.

Layout under the dataset directory:
    parquet/events/date=YYYY-MM-DD/[hour=HH/]part-*.parquet   the plain Parquet table
    iceberg/bench/events/{data,metadata}/                    the Iceberg table (Hadoop catalog)
    dataset.json                                             written last: the completion mark

Iceberg metadata holds absolute file paths, so a built table cannot be moved into place
afterwards; instead the build happens in its final directory and `dataset.json` is
renamed into place only when both tables are written and verified. A directory without
it is an interrupted build: never reused, wiped and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import pyarrow
from pyspark.sql import SparkSession

from icelab.core import storage
from icelab.core.config import DatasetConfig, EngineConfig
from icelab.core.session import register_iceberg_catalog
from icelab.datagen.generate import generator_fingerprint, partition_columns

# Fields that change neither the rows nor the file layout (one file per partition per
# commit whatever the parallelism), so they do not change the hash.
_NOT_HASHED = {"name", "parallelism"}
MARKER = "dataset.json"
# The Iceberg table's namespace and name: a Hadoop catalog places a table at
# <warehouse>/<namespace>/<name>, so its location and its identifier both come from these.
ICEBERG_IDENT = ("bench", "events")


# What the arrow builder's files are, byte for byte: sha256 over the tiny dataset's data files and
# their manifest entries, as `tests/datagen/test_arrow_build.py` computes it and pins it. The hash
# covers this digest, not the builder's sources: a change that keeps the bytes keeps the dataset;
# one that changes them fails that test until this digest is updated, which moves the hash.
ARROW_BYTES = "2206543c1515495bc7c7aa15394e83dcf97b5f0794705bc82f3136d87a49bfc2"


def config_hash(ds: DatasetConfig) -> str:
    """12 hex digits over everything that decides the rows and the layout."""
    spec = ds.model_dump(mode="json", exclude=_NOT_HASHED)
    spec["scale"] = None  # rows * scale is what matters; 2 x 0.5 == 1 x 1
    spec["rows"] = ds.total_rows
    if spec["builder"] == "spark":
        spec["generator"] = generator_fingerprint()
        del spec["builder"]  # Spark's build predates the choice: its hashes stay as they were
    else:
        # pyarrow's encoder decides the bytes with the builder (its version is in every footer).
        spec["generator"] = f"{ARROW_BYTES}+pyarrow-{pyarrow.__version__}"
    blob = json.dumps(spec, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


@dataclass(frozen=True)
class Dataset:
    """One dataset: its config, hash, location and table names."""

    config: DatasetConfig
    hash: str
    uri: str

    @classmethod
    def of(cls, ds: DatasetConfig, data_dir: str) -> Dataset:
        """The dataset a config describes, under a data directory (path or URI)."""
        digest = config_hash(ds)
        return cls(ds, digest, storage.join(storage.to_uri(data_dir), f"{ds.name}-{digest}"))

    @property
    def marker_uri(self) -> str:
        """The completion mark; present only for a finished, verified build."""
        return storage.join(self.uri, MARKER)

    @property
    def parquet_uri(self) -> str:
        """Root of the Hive-style Parquet table."""
        return storage.join(self.uri, "parquet", "events")

    @property
    def warehouse_uri(self) -> str:
        """Warehouse of this dataset's Iceberg (Hadoop) catalog."""
        return storage.join(self.uri, "iceberg")

    @property
    def iceberg_uri(self) -> str:
        """Location of the Iceberg table."""
        return storage.join(self.warehouse_uri, *ICEBERG_IDENT)

    @property
    def catalog(self) -> str:
        """Spark catalog name of this dataset's Iceberg tables."""
        return f"ice_{self.hash}"

    @property
    def iceberg_table(self) -> str:
        """Fully qualified Iceberg table name."""
        return ".".join((self.catalog, *ICEBERG_IDENT))

    @property
    def parquet_table(self) -> str:
        """Spark catalog name of the Parquet table."""
        return f"spark_catalog.default.events_{self.hash}"

    def register_catalog(self, spark: SparkSession, engine: EngineConfig) -> None:
        """Make the Iceberg catalog known to the session."""
        register_iceberg_catalog(spark, self.catalog, self.warehouse_uri, engine)

    def register_parquet(self, spark: SparkSession) -> None:
        """Register the Parquet table with its partitions in Spark's catalog.

        The partition list lets a time filter list only the matching directories, as a
        Hive metastore would; it is rebuilt per session (RECOVER PARTITIONS lists the
        directory tree once, outside any timed section).
        """
        spark.sql(f"DROP TABLE IF EXISTS {self.parquet_table}")
        # Schema and partition columns (date[, hour]) are inferred from the files.
        spark.sql(f"CREATE TABLE {self.parquet_table} USING parquet LOCATION '{self.parquet_uri}'")
        spark.sql(f"ALTER TABLE {self.parquet_table} RECOVER PARTITIONS")
        found = spark.table(self.parquet_table).schema.fieldNames()
        expected = partition_columns(self.config)
        if found[-len(expected) :] != expected:
            raise RuntimeError(f"{self.parquet_uri}: partition columns {expected} not found")
