"""Get a dataset: reuse a finished build, or (re)build, verify and mark it finished."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.core import locks, storage
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.storage import Storage
from icelab.datagen.arrow_ingest import ingest_arrow
from icelab.datagen.copy import copy_dataset, moved_source, no_source
from icelab.datagen.dataset import Dataset
from icelab.datagen.ingest import IngestTimes, ingest, table_properties
from icelab.datagen.store_requests import PhaseRequests
from icelab.datagen.summary import summarize
from icelab.datagen.verify import (
    DUCKDB_MEMORY,
    EVERY_DAY,
    READERS_PER_DAY,
    Checksums,
    Days,
    Verification,
    compare,
    duckdb_checksums,
    duckdb_connection,
    iceberg_source,
    parquet_source,
    spark_checksums,
    split,
)

log = logging.getLogger(__name__)


@dataclass
class Built:
    """A ready dataset and what its completion mark says about it."""

    dataset: Dataset
    reused: bool
    info: dict[str, Any]
    verification: Verification | None = None  # set when this call built (and so verified) it


def verify(
    spark: SparkSession,
    dataset: Dataset,
    with_duckdb: bool = True,
    progress: bool = False,
    duckdb_memory: str = DUCKDB_MEMORY,
    readers_per_day: int = READERS_PER_DAY,
    requests: PhaseRequests | None = None,
) -> Verification:
    """Checksums per day of both tables by Spark, and by DuckDB where it reaches the data (local
    disk, or the run's object store).

    Args:
        readers_per_day: 4, every reading reads every day; 2, each day is read by one Spark and
            one DuckDB reading of different tables (`split`). Without DuckDB, both Spark readings
            read every day.
        requests: where each reading's S3A requests are counted, on a store (Spark's only).
    """
    schema = spark.table(dataset.iceberg_table).schema
    pq_dir = storage.duckdb_path(dataset.parquet_uri)
    ice_dir = storage.duckdb_path(dataset.iceberg_uri)
    con = duckdb_connection(memory_limit=duckdb_memory) if with_duckdb and pq_dir and ice_dir else None
    if con is None and with_duckdb:
        log.warning("DuckDB check skipped: DuckDB cannot reach %s (local or storage=object)", dataset.uri)
    split_days = con is not None and readers_per_day == 2
    days = split(dataset.config.end, dataset.config.span_days) if split_days else {}
    readers: dict[str, Callable[[Days], Checksums]] = {
        "spark/iceberg": lambda cut: spark_checksums(spark, dataset.iceberg_table, schema, cut),
        "spark/parquet": lambda cut: spark_checksums(spark, dataset.parquet_table, schema, cut),
    }
    if con is not None:
        readers["duckdb/parquet"] = lambda cut: duckdb_checksums(con, parquet_source(pq_dir), schema, cut)
        readers["duckdb/iceberg"] = lambda cut: duckdb_checksums(con, iceberg_source(ice_dir), schema, cut)
    readings, seconds = {}, {}
    bar = tqdm(readers.items(), desc="verify", unit="reading", disable=not progress)
    for name, read in bar:
        bar.set_postfix_str(name)
        counted = requests is not None and name.startswith("spark/")
        # The counters are read outside the timed reading.
        with requests.phase(f"verify {name}") if counted else contextlib.nullcontext():
            t0 = time.perf_counter()
            readings[name] = read(days.get(name, EVERY_DAY))
            seconds[name] = time.perf_counter() - t0
    if con is not None:
        con.close()
    check = compare(readings, days)
    check.seconds = seconds
    return check


def _throughput(times: IngestTimes, summary: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"seconds": asdict(times) | {"total_s": times.total_s}}
    out["seconds"].pop("per_batch")
    out["seconds"].pop("workers")
    for fmt in ("parquet", "iceberg"):
        secs = getattr(times, f"{fmt}_s")
        out[fmt] = {
            "rows_per_s": times.rows / secs if secs else None,
            "mb_per_s": summary[fmt]["bytes"] / 1e6 / secs if secs else None,
        }
    wall = times.wall_s or times.total_s  # the steps overlap across workers: rows over the wall time
    out["both_formats_rows_per_s"] = times.rows / wall if wall else None
    if times.workers:
        out["workers"] = times.workers
    return out


def read_marker(spark: SparkSession, dataset: Dataset) -> dict[str, Any] | None:
    """The completion mark's content, or None for a missing or unfinished dataset."""
    fs = Storage(spark)
    if not fs.exists(dataset.marker_uri):
        return None
    info = json.loads(fs.read_text(dataset.marker_uri))
    return info if info.get("hash") == dataset.hash else None


def ensure(
    spark: SparkSession,
    dataset: Dataset,
    engine: EngineConfig,
    force: bool = False,
    with_duckdb: bool = True,
    progress: bool = True,
    duckdb_memory: str = DUCKDB_MEMORY,
    copy_from: str | None = None,
    readers_per_day: int = READERS_PER_DAY,
) -> Built:
    """Reuse the finished dataset, or build it from scratch (or copy it from `copy_from`, a data
    directory holding it finished: `icelab.datagen.copy`).

    Raises:
        UserError: when the freshly built (or copied) tables do not hold the same rows, or
            `copy_from` holds no finished copy of the dataset.
    """
    fs = Storage(spark)
    dataset.register_catalog(spark, engine)
    # Read under a shared lock, built under an exclusive one: a run never reads a dataset
    # another run is (re)building, and two runs needing the same new dataset build it once.
    what, key = f"dataset {dataset.config.name}-{dataset.hash}", locks.key_of(dataset.uri)
    locks.acquire(key, what, exclusive=force)
    info = None if force else read_marker(spark, dataset)
    if info is None and not force:
        # Two runs that both found no mark both want to build: the one that waits stops waiting
        # once the other's mark is there (the builder keeps its lock shared while it reads on).
        locks.acquire(key, what, exclusive=True, unless=lambda: read_marker(spark, dataset) is not None)
        info = read_marker(spark, dataset)  # another run may have built it while this one waited
    if info is not None:
        locks.acquire(key, what, exclusive=False)
        dataset.register_parquet(spark)
        return Built(dataset, True, info)

    if fs.exists(dataset.uri):
        why = "force=true" if force else "no completion mark: an interrupted build"
        log.warning("rebuilding %s (%s)", dataset.uri, why)
        # The Hadoop catalog rereads metadata from storage on each load (catalog caching is
        # pinned off in conf/engine/_common.yaml), so deleting the files forgets the table.
        fs.delete(dataset.uri)
    fs.mkdirs(dataset.uri)
    started = dt.datetime.now(dt.timezone.utc)
    requests = PhaseRequests(spark, dataset.uri)
    t0 = time.perf_counter()
    if copy_from:
        source = Dataset.of(dataset.config, copy_from)
        source_info = read_marker(spark, source)
        if source_info is None:
            raise UserError(no_source(copy_from, dataset))
        built = replace(source, uri=source_info["uri"])
        if built != source and read_marker(spark, built) is None:
            raise UserError(moved_source(source, built))
        with requests.phase("copy"):
            copied = copy_dataset(spark, source, dataset, engine, progress, built)
    else:
        with requests.phase("ingest"):
            if dataset.config.builder == "arrow":
                times = ingest_arrow(spark, dataset, engine.iceberg_jar, progress=progress)
            else:
                times = ingest(spark, dataset, progress=progress)
    ingested = time.perf_counter()
    dataset.register_parquet(spark)
    with requests.phase("summary"):
        summary = summarize(spark, dataset)
    summarized = time.perf_counter()
    check = verify(spark, dataset, with_duckdb, progress, duckdb_memory, readers_per_day, requests)
    if not check.ok:
        raise UserError(
            f"dataset {dataset.uri} failed verification: {len(check.mismatches)} day(s) differ, "
            f"first {check.mismatches[0]}"
        )
    info = {
        "name": dataset.config.name,
        "hash": dataset.hash,
        "uri": dataset.uri,
        "created_utc": started.isoformat(timespec="seconds"),
        "config": dataset.config.model_dump(mode="json"),
        "iceberg_table_properties": table_properties(dataset),
        "summary": summary,
        # A copy keeps the figures of the build it copied (that build's machine and storage).
        "ingest": source_info["ingest"] if copy_from else _throughput(times, summary),
        # Whole-table rows and checksum per table, and which days each reading read.
        "verification": {k: list(v) for k, v in check.tables().items()},
        "verified_by": {name: str(check.days[name]) for name in check.readings},
        # Where the build's wall time went: ingest (or copy), the summary, each verifying read.
        "profile_s": {
            "ingest": ingested - t0,
            "summary": summarized - ingested,
            **{f"verify {name}": s for name, s in check.seconds.items()},
        },
        "build_wall_s": time.perf_counter() - t0,
    }
    if requests.record() is not None:
        # What the driver's S3A client sent the store, phase by phase (icelab.datagen.store_requests).
        info["s3a_requests"] = requests.record()
    if copy_from:
        info["copy"] = copied | {"source_created_utc": source_info["created_utc"]}
    fs.write_text_atomic(dataset.marker_uri, json.dumps(info, indent=2, default=str))
    locks.acquire(key, what, exclusive=False)
    return Built(dataset, False, info, check)
