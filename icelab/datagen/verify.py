"""Both tables hold the same rows: per day partition, row count and checksum, computed by
Spark over the two tables and independently by DuckDB over the files they point to.

Each reading decodes every column chunk of the files it reads, so it costs per file. A build
reads each day twice (`split`): one Spark and one DuckDB reading, of different tables. Every
one of the four readings still runs, on half the days. `experiment=verify` reads every day four
times.
"""

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
from icelab.core.session import session_settings
from icelab.datagen.fingerprint import row_hash_sql

# {day: (rows, checksum)}
Checksums = dict[dt.date, tuple[int, int]]

# conf/config.yaml (verify.readers_per_day) sets it for runs; this is the default for direct calls.
READERS_PER_DAY = 2


@dataclass(frozen=True)
class Days:
    """The day partitions a reading reads: every one, those before `until`, or those from `since`."""

    since: dt.date | None = None
    until: dt.date | None = None

    def __contains__(self, day: dt.date) -> bool:
        return (self.since is None or day >= self.since) and (self.until is None or day < self.until)

    def __str__(self) -> str:
        if self.since is None and self.until is None:
            return "every day"
        return f"from {self.since}" if self.until is None else f"before {self.until}"

    def spark(self, df: DataFrame) -> DataFrame:
        """`df` cut to these days (partition pruning on Parquet, file metrics on Iceberg)."""
        if self.since is not None:
            df = df.where(F.col("date") >= F.lit(self.since))
        if self.until is not None:
            df = df.where(F.col("date") < F.lit(self.until))
        return df

    def duckdb(self) -> str:
        """A WHERE clause for these days, or nothing."""
        cuts = [f"\"date\" >= DATE '{self.since}'"] if self.since is not None else []
        cuts += [f"\"date\" < DATE '{self.until}'"] if self.until is not None else []
        return f" WHERE {' AND '.join(cuts)}" if cuts else ""


EVERY_DAY = Days()


def split(end: dt.date, span_days: int) -> dict[str, Days]:
    """Who reads which days when each day is read twice: before the span's middle, Spark reads
    Iceberg and DuckDB reads Parquet; from it on, Spark reads Parquet and DuckDB reads Iceberg.
    Every day is compared across both tables and both engines, at half the cost of four full
    readings. The two halves are open-ended, so a day outside the span is read too."""
    middle = end - dt.timedelta(days=span_days // 2)
    before, since = Days(until=middle), Days(since=middle)
    return {
        "spark/iceberg": before,
        "duckdb/parquet": before,
        "spark/parquet": since,
        "duckdb/iceberg": since,
    }


def frame_checksums(df: DataFrame, schema: StructType | None = None, days: Days = EVERY_DAY) -> Checksums:
    """Per-day row count and checksum of any DataFrame with a `date` column.

    Args:
        df: the rows.
        schema: the columns to hash, in order (default: all of df's).
        days: the days to read.
    """
    hashed = days.spark(df).selectExpr("`date` AS d", f"{row_hash_sql(schema or df.schema, 'spark')} AS h")
    rows = hashed.groupBy("d").agg(F.count("*").alias("n"), F.sum("h").alias("c")).collect()
    return {r.d: (int(r.n), int(r.c)) for r in rows}


# What a verification reading counts a file as, in bytes read, when it packs files into tasks. Spark's
# and Iceberg's default, 4 MB, makes a task of every 32 files of a build's small ones, and each
# task generates the row hash's projection anew: the schema's hundred-odd fields keep it out of
# whole-stage codegen (spark.sql.codegen.maxFields). At 64 KB both pack the files by size over the
# session's parallelism: a few tasks per core, at most 128 MB each, on one machine or a cluster.
OPEN_COST_BYTES = 64 * 1024
OPEN_COST_CONF = "spark.sql.files.openCostInBytes"
# Spark's file sources (the Parquet table) take it from the session; Iceberg's from `reading`.
COARSE_TASKS = {OPEN_COST_CONF: str(OPEN_COST_BYTES)}


def reading(spark: SparkSession, table: str) -> DataFrame:
    """A Spark table as a verification reads it: Iceberg's files counted as `OPEN_COST_BYTES`
    (a read option; other sources ignore it). Plan it within `session_settings(spark, COARSE_TASKS)`
    for Parquet's."""
    return spark.read.option("file-open-cost", str(OPEN_COST_BYTES)).table(table)


def spark_checksums(
    spark: SparkSession, table: str, schema: StructType | None = None, days: Days = EVERY_DAY
) -> Checksums:
    """Per-day row count and checksum of a Spark table (over `schema`'s columns, by default all
    of its own), over `days`, in a few tasks per core."""
    with session_settings(spark, COARSE_TASKS):
        return frame_checksums(reading(spark, table), schema, days)


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
# DuckDB's threads over an object store: a thread there mostly waits for the store's answers,
# so more threads than cores keep more requests in flight.
DUCKDB_STORE_THREADS = 8


def duckdb_connection(
    threads: int | None = None, memory_limit: str = DUCKDB_MEMORY
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the avro and iceberg extensions loaded (avro first), and with
    httpfs and the store's S3 secret while an object store is open (it reads `s3://` there).
    Its threads: `threads`, else 2 on local disk and `DUCKDB_STORE_THREADS` on a store.

    DuckDB's default limit (80% of RAM) would take what the Spark driver holds: over
    tens of thousands of files its memory grows with the file count, so it is capped.
    """
    store = object_store.active()
    if threads is None:
        threads = 2 if store is None else DUCKDB_STORE_THREADS
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET preserve_insertion_order = false")
    for name in ("avro", "iceberg"):
        con.execute(f"LOAD '{_extension(name)}'")
    if store is not None:
        con.execute(f"LOAD '{_extension('httpfs')}'")
        con.execute(store.duckdb_secret())
        # One read of a store that stopped answering fails in seconds, not after 3 retries of a
        # 30 s timeout each (DuckDB's defaults); a healthy store never waits on either.
        con.execute(f"SET http_retries = {DUCKDB_HTTP_RETRIES}")
        con.execute(f"SET http_timeout = {DUCKDB_HTTP_TIMEOUT_S}")
    return con


def duckdb_checksums(
    con: duckdb.DuckDBPyConnection, source: str, schema: StructType, days: Days = EVERY_DAY
) -> Checksums:
    """Per-day row count and checksum with DuckDB over a table function (`source`), over `days`."""
    checksum = row_hash_sql(schema, "duckdb")
    rows = con.execute(
        f'SELECT "date", count(*), sum({checksum}) FROM {source}{days.duckdb()} GROUP BY 1'
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
    """Checksums of each (engine, table) reading over its days, compared day by day."""

    readings: dict[str, Checksums]
    mismatches: list[str] = field(default_factory=list)
    days: dict[str, Days] = field(default_factory=dict)  # what each reading read (default: every day)
    seconds: dict[str, float] = field(default_factory=dict)  # per reading, when timed

    @property
    def ok(self) -> bool:
        """The readings agree on every day."""
        return not self.mismatches

    @property
    def every_day(self) -> bool:
        """Every reading read every day."""
        return all(self.days.get(name, EVERY_DAY) == EVERY_DAY for name in self.readings)

    @property
    def day_partitions(self) -> set[dt.date]:
        """Every day some reading returned rows for."""
        return set().union(*self.readings.values())

    @property
    def readers_per_day(self) -> int:
        """The fewest readings any day was read by."""
        days = [self.days.get(name, EVERY_DAY) for name in self.readings]
        return min((sum(day in d for d in days) for day in self.day_partitions), default=0)

    def totals(self) -> dict[str, tuple[int, int]]:
        """Rows and checksum per reading, over the days it read."""
        return {name: _sum(cs) for name, cs in self.readings.items()}

    def tables(self) -> dict[str, tuple[int, int]]:
        """Whole-table rows and checksum per table (`iceberg`, `parquet`), joined from its readings."""
        joined: dict[str, Checksums] = {}
        for name, cs in self.readings.items():
            joined.setdefault(name.split("/")[1], {}).update(cs)
        return {table: _sum(cs) for table, cs in sorted(joined.items())}


def _sum(cs: Checksums) -> tuple[int, int]:
    return sum(n for n, _ in cs.values()), sum(c for _, c in cs.values())


def compare(readings: dict[str, Checksums], days: dict[str, Days] | None = None) -> Verification:
    """Day by day, every reading whose days hold that day must agree; one that has no rows there
    while another has is a mismatch, and so is a row from outside a reading's days.

    Args:
        readings: per reading, its checksums per day.
        days: per reading, the days it read (default: every day for each).
    """
    check = Verification(readings, days={name: (days or {}).get(name, EVERY_DAY) for name in readings})
    days = check.days
    for day in sorted(check.day_partitions):
        seen = {name: readings[name].get(day) for name in readings if day in days[name]}
        strays = [name for name in readings if day in readings[name] and day not in days[name]]
        if len(set(seen.values())) > 1 or strays:
            found = " ".join(f"{name}={value}" for name, value in seen.items())
            check.mismatches.append(
                f"{day}: {found}" + "".join(f" {name} read it outside {days[name]}" for name in strays)
            )
    return check
