"""Iceberg table shapes written by pyiceberg (no JVM): a SQL catalog on SQLite and a local
warehouse, so the doctor reads metadata a writer other than Spark produced, by its metadata.json."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import DayTransform, TruncateTransform
from pyiceberg.types import LongType, NestedField, StringType, TimestampType

from icelab.datagen.spark_sql_shapes import START

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "ts", TimestampType(), required=False),
    NestedField(3, "v", StringType(), required=False),
)
BY_DAY = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"))


def catalog(warehouse: Path) -> SqlCatalog:
    """A pyiceberg SQL catalog whose database and tables live under `warehouse`."""
    warehouse.mkdir(parents=True, exist_ok=True)
    return SqlCatalog(
        "shapes", uri=f"sqlite:///{warehouse / 'catalog.db'}", warehouse=warehouse.resolve().as_uri()
    )


def _create(
    cat: SqlCatalog, name: str, properties: dict[str, str] | None = None, spec: PartitionSpec = BY_DAY
) -> Table:
    cat.create_namespace_if_not_exists("db")
    if cat.table_exists(f"db.{name}"):
        cat.drop_table(f"db.{name}")
    return cat.create_table(f"db.{name}", SCHEMA, partition_spec=spec, properties=properties or {})


def _rows(first_id: int, rows: int, days: int) -> pa.Table:
    """`rows` rows spread over `days` days from START, as `spark_sql_shapes.append` writes them."""
    start = dt.datetime.combine(START, dt.time())
    ids = list(range(first_id, first_id + rows))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "ts": pa.array([start + dt.timedelta(days=i % days, seconds=i) for i in ids], pa.timestamp("us")),
            "v": pa.array([f"v{i}" for i in ids], pa.string()),
        }
    )


def fragmented(
    warehouse: Path,
    name: str,
    appends: int = 6,
    days: int = 5,
    rows: int = 50,
    properties: dict[str, str] | None = None,
) -> str:
    """`appends` appends of `rows` rows over every day each (pyiceberg's fast append: a manifest
    per commit); the table's current metadata.json. `properties`: the table's (pyiceberg writes
    its manifests with `write.avro.compression-codec`)."""
    table = _create(catalog(warehouse), name, properties)
    for j in range(appends):
        table.append(_rows(j * max(100, rows), rows, days))
    return table.metadata_location


def bulk_load(warehouse: Path, name: str, days: int = 60) -> str:
    """One append of 5 rows a day over `days` days; the table's current metadata.json."""
    table = _create(catalog(warehouse), name)
    table.append(_rows(0, 5 * days, days))
    return table.metadata_location


def day_and_truncate(
    warehouse: Path, name: str, appends: int = 6, days: int = 5, rows: int = 50, width: int = 2
) -> str:
    """Partitioned by day(ts) and truncate(`width`, v), `appends` appends of `rows` rows over every
    day each (a manifest per commit); the table's current metadata.json."""
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=3, field_id=1001, transform=TruncateTransform(width), name="v_trunc"),
    )
    table = _create(catalog(warehouse), name, spec=spec)
    for j in range(appends):
        table.append(_rows(j * max(100, rows), rows, days))
    return table.metadata_location
