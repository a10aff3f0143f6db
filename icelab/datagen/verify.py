"""Both tables hold the same rows: per day partition, row count and checksum, computed by
Spark over the two tables and independently by DuckDB over the files they point to."""

from __future__ import annotations

import datetime as dt
import glob
import site
from dataclasses import dataclass, field

import duckdb
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from icelab.core import object_store
from icelab.datagen.fingerprint import row_hash_sql

# {day: (rows, checksum)}
Checksums = dict[dt.date, tuple[int, int]]


def frame_checksums(df: DataFrame, schema: StructType | None = None) -> Checksums:
    """Per-day row count and checksum of any DataFrame with a `date` column.

    Args:
        df: the rows.
        schema: the columns to hash, in order (default: all of df's).
    """
    hashed = df.selectExpr("`date` AS d", f"{row_hash_sql(schema or df.schema, 'spark')} AS h")
    rows = hashed.groupBy("d").agg(F.count("*").alias("n"), F.sum("h").alias("c")).collect()
    return {r.d: (int(r.n), int(r.c)) for r in rows}


def spark_checksums(spark: SparkSession, table: str, schema: StructType) -> Checksums:
    """Per-day row count and checksum of a Spark table."""
    return frame_checksums(spark.table(table), schema)


def _extension(name: str) -> str:
    """Path of a DuckDB extension shipped by its PyPI package (offline: no download)."""
    for root in site.getsitepackages() + [site.getusersitepackages()]:
        found = glob.glob(f"{root}/duckdb_extension_{name}/extensions/*/{name}.duckdb_extension")
        if found:
            return found[0]
    raise FileNotFoundError(f"duckdb-extension-{name} is not installed")


# conf/config.yaml (verify.duckdb_memory) sets it for runs; this is the default for direct calls.
DUCKDB_MEMORY = "3GB"


DUCKDB_HTTP_RETRIES = 1
DUCKDB_HTTP_TIMEOUT_S = 10


def duckdb_connection(threads: int = 2, memory_limit: str = DUCKDB_MEMORY) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the avro and iceberg extensions loaded (avro first), and with
    httpfs and the store's S3 secret while an object store is open (it reads `s3://` there).

    DuckDB's default limit (80% of RAM) would take what the Spark driver holds: over
    tens of thousands of files its memory grows with the file count, so it is capped.
    """
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET preserve_insertion_order = false")
    for name in ("avro", "iceberg"):
        con.execute(f"LOAD '{_extension(name)}'")
    store = object_store.active()
    if store is not None:
        con.execute(f"LOAD '{_extension('httpfs')}'")
        con.execute(store.duckdb_secret())
        # One read of a store that stopped answering fails in seconds, not after 3 retries of a
        # 30 s timeout each (DuckDB's defaults); a healthy store never waits on either.
        con.execute(f"SET http_retries = {DUCKDB_HTTP_RETRIES}")
        con.execute(f"SET http_timeout = {DUCKDB_HTTP_TIMEOUT_S}")
    return con


def duckdb_checksums(con: duckdb.DuckDBPyConnection, source: str, schema: StructType) -> Checksums:
    """Per-day row count and checksum with DuckDB over a table function (`source`)."""
    rows = con.execute(
        f'SELECT "date", count(*), sum({row_hash_sql(schema, "duckdb")}) FROM {source} GROUP BY 1'
    ).fetchall()
    return {d: (int(n), int(c)) for d, n, c in rows}


def parquet_source(path: str) -> str:
    """DuckDB table function over a Hive-partitioned Parquet directory (a local path or s3://)."""
    return f"read_parquet('{path}/**/*.parquet', hive_partitioning = true)"


def iceberg_source(table_dir: str) -> str:
    """DuckDB table function over an Iceberg table (Hadoop catalog layout; a local path or s3://)."""
    return f"iceberg_scan('{table_dir}')"


@dataclass
class Verification:
    """Checksums of each (engine, table) reading, compared with the first one."""

    readings: dict[str, Checksums]
    mismatches: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # per reading, when timed

    @property
    def ok(self) -> bool:
        """All readings agree on every day."""
        return not self.mismatches

    def totals(self) -> dict[str, tuple[int, int]]:
        """Whole-table rows and checksum per reading."""
        return {
            name: (sum(n for n, _ in cs.values()), sum(c for _, c in cs.values()))
            for name, cs in self.readings.items()
        }


def compare(readings: dict[str, Checksums]) -> Verification:
    """Compare every reading with the first, day by day."""
    names = list(readings)
    ref_name, ref = names[0], readings[names[0]]
    mismatches = []
    for name in names[1:]:
        other = readings[name]
        for day in sorted(set(ref) | set(other)):
            if ref.get(day) != other.get(day):
                mismatches.append(f"{day}: {ref_name}={ref.get(day)} {name}={other.get(day)}")
    return Verification(readings, mismatches)
