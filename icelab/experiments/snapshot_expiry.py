"""Task `snapshot_expiry`: what accumulating snapshots cost, and what expiring them gives back.

The dataset's commits are replayed into a scratch Iceberg table (`<catalog>.bench.expiry`,
its own data files) at `commits_per_day` commits per simulated day, each commit's rows read back
from the dataset's Iceberg table (what its snapshot added). After each simulated day: snapshots,
current metadata.json bytes, all metadata bytes, the time of a metadata-only commit (a
table-property change, which rewrites metadata.json), and the planning time of the window count.
Then snapshots older than `retain_days` simulated days are expired and everything is measured
again; rows and checksum must be unchanged.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig
from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from tqdm import tqdm

from icelab.bench.context import open_context
from icelab.bench.measure import measure
from icelab.bench.profiles import current_metadata_file
from icelab.bench.windows import load_query, parse_window, render
from icelab.charts.expiry import write_chart
from icelab.core import run_state
from icelab.core.config import ExpiryConfig, expiry_config
from icelab.core.errors import UserError
from icelab.core.results import write_json, write_parquet
from icelab.core.storage import Storage
from icelab.datagen.generate import partition_columns
from icelab.datagen.ingest import clustered, create_iceberg_table
from icelab.datagen.verify import spark_checksums


def metadata_bytes(spark: SparkSession, table: str) -> dict[str, int]:
    """Bytes of the current metadata.json and of everything under the table's metadata/."""
    current = current_metadata_file(spark, table)
    files = Storage(spark).list_files(current.rsplit("/", 1)[0])
    by_name = {f.path.rsplit("/", 1)[-1]: f.size for f in files}
    return {
        "metadata_json_bytes": by_name[current.rsplit("/", 1)[-1]],
        "metadata_dir_bytes": sum(by_name.values()),
        "metadata_files": len(by_name),
    }


def probe(spark: SparkSession, table: str, sql: str, repetitions: int, tick: int) -> dict[str, Any]:
    """One measurement point: snapshots, metadata bytes, a metadata-only commit, planning."""
    t0 = time.perf_counter()
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('icelab.probe' = '{tick}')")
    commit_ms = (time.perf_counter() - t0) * 1e3
    plans = [measure(spark, sql, execute=False) for _ in range(repetitions)]
    failed = next((m.error for m in plans if m.status != "ok"), None)
    if failed:
        raise UserError(f"planning probe failed on {table}: {failed}")
    snapshots = spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0]
    manifests = spark.sql(f"SELECT count(*) FROM {table}.manifests").first()[0]
    return {
        "snapshots": snapshots,
        "manifests": manifests,
        **metadata_bytes(spark, table),
        "commit_probe_ms": commit_ms,
        "planning_ms": statistics.median(m.planning_ms for m in plans),
        "planning_ms_min": min(m.planning_ms for m in plans),
        "manifests_scanned": plans[0].scan.get("manifests_scanned"),
    }


def cutoff(spark: SparkSession, table: str, commits_per_day: int, retain_days: int) -> dt.datetime | None:
    """Commit time of the first snapshot of the oldest retained simulated day (None: keep all)."""
    times = [
        r[0] for r in spark.sql(f"SELECT committed_at FROM {table}.snapshots ORDER BY committed_at").collect()
    ]
    last_day = (len(times) - 1) // commits_per_day
    first_kept = last_day - retain_days + 1
    return times[first_kept * commits_per_day] if first_kept > 0 else None


def retention_warning(retained_s: float | None, longest_ms: float) -> str | None:
    """A warning when expiry keeps less real time of commits than the longest query timed took:
    a reader planned on a snapshot just outside the retention fails once expiry deletes its files.

    Args:
        retained_s: real seconds between the oldest retained commit and the expiry (None: none expired).
        longest_ms: the longest query the run timed.
    """
    if retained_s is None or retained_s * 1000 >= longest_ms:
        return None
    return (
        f"retention keeps {retained_s:.1f} s of commits (real time), less than the longest query timed "
        f"({longest_ms / 1000:.1f} s): a query that started on a snapshot expired now would fail "
        "once its files are deleted; retain at least as long as your longest query runs"
    )


def commit_snapshots(spark: SparkSession, table: str) -> list[int]:
    """The snapshot ids of the table's current history, oldest first (by the parent chain, not
    by commit time: a builder commits several in one millisecond)."""
    rows = spark.sql(f"SELECT snapshot_id, parent_id FROM {table}.snapshots").collect()
    parent = {r.snapshot_id: r.parent_id for r in rows}
    current = spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main'").first()
    chain = []
    snapshot = current[0] if current else None
    while snapshot is not None:
        chain.append(snapshot)
        snapshot = parent.get(snapshot)
    return chain[::-1]


def commit_rows(spark: SparkSession, table: str, snapshots: list[int], commit: int) -> DataFrame:
    """The rows the table's `commit`-th snapshot added (an incremental append scan)."""
    reader = spark.read.format("iceberg")
    if commit == 0:
        return reader.option("snapshot-id", str(snapshots[0])).load(table)
    start, end = snapshots[commit - 1], snapshots[commit]
    return reader.option("start-snapshot-id", str(start)).option("end-snapshot-id", str(end)).load(table)


def replay(
    spark: SparkSession, built: Any, table: str, ecfg: ExpiryConfig, sql: str, run_dir: Path, progress: bool
):
    """Append each of the dataset's commits as a commit of its own; measure after each simulated day.

    Raises:
        UserError: when the dataset's Iceberg table does not hold one snapshot per commit.
    """
    ds = built.dataset
    parts = partition_columns(ds.config)
    snapshots = commit_snapshots(spark, ds.iceberg_table)
    if len(snapshots) != ds.config.commits:
        raise UserError(
            f"{ds.iceberg_table} has {len(snapshots)} snapshots, not the {ds.config.commits} commits "
            "the dataset was built with: rebuild it (python run.py experiment=datagen force=true)"
        )
    points: list[dict[str, Any]] = []
    appends: list[float] = []
    for batch in tqdm(range(ds.config.commits), desc="replay", unit="commit", disable=not progress):
        rows = commit_rows(spark, ds.iceberg_table, snapshots, batch)
        df = clustered(rows, parts).persist(StorageLevel.MEMORY_AND_DISK)
        df.count()
        if batch == 0:
            create_iceberg_table(spark, ds, df.schema, table)
        t0 = time.perf_counter()
        df.writeTo(table).append()
        appends.append((time.perf_counter() - t0) * 1e3)
        df.unpersist()
        if (batch + 1) % ecfg.commits_per_day == 0 or batch == ds.config.commits - 1:
            point = probe(spark, table, sql, ecfg.probe_repetitions, batch)
            points.append(
                {
                    "phase": "ingest",
                    "sim_day": batch // ecfg.commits_per_day,
                    "append_ms": statistics.mean(appends),
                    **point,
                }
            )
            appends = []
            write_parquet(run_dir / "timeline.parquet", pd.DataFrame(points))
    return points


@run_state.tracked
def run(cfg: DictConfig) -> Path:
    """Replay, measure, expire, measure; check rows and checksum; store and chart.

    Returns:
        The run directory.
    """
    ecfg = expiry_config(cfg)
    ctx = open_context(cfg)
    built = ctx.dataset()
    spark, ds = ctx.spark, built.dataset
    run_dir = ctx.new_run(ecfg.name, built)
    # One scratch table per run, so concurrent runs on one dataset never share it.
    table = f"{ds.catalog}.bench.expiry_{run_dir.name.rsplit('-', 1)[-1]}"
    window = parse_window(ecfg.probe_window, dt.datetime.combine(ds.config.end, dt.time()))
    sql = render(load_query("count_window"), table, window)
    try:
        summary = _replay_and_expire(spark, built, table, ecfg, sql, run_dir, bool(cfg.progress))
    finally:
        if not ecfg.keep_table:
            spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")  # its own data files, nothing shared
    chart = write_chart(run_dir)
    b, a, rows = summary["before"], summary["after"], summary["rows"]
    print(
        f"snapshot_expiry on {ds.config.name}-{ds.hash}: {ds.config.commits} commits at "
        f"{ecfg.commits_per_day}/simulated day, retain {ecfg.retain_days} days\n"
        f"  before expiry  {b['snapshots']} snapshots, metadata.json {b['metadata_json_bytes']:,} B, "
        f"metadata dir {b['metadata_dir_bytes']:,} B, commit {b['commit_probe_ms']:.0f} ms, "
        f"planning {b['planning_ms']:.0f} ms\n"
        f"  after expiry   {a['snapshots']} snapshots, metadata.json {a['metadata_json_bytes']:,} B, "
        f"metadata dir {a['metadata_dir_bytes']:,} B, commit {a['commit_probe_ms']:.0f} ms, "
        f"planning {a['planning_ms']:.0f} ms\n"
        f"  rows {rows:,} (expected {ds.config.total_rows:,}), checksum "
        f"{'unchanged' if summary['unchanged'] else 'CHANGED'} by expiry\n"
        f"results: {run_dir} (chart: {chart.name})"
    )
    if summary["retention_warning"]:
        print(f"warning: {summary['retention_warning']}")
    if not summary["unchanged"] or rows != ds.config.total_rows:
        raise UserError(f"expiry changed the table's rows: see {run_dir / 'expiry.json'}")
    return run_dir


def _replay_and_expire(
    spark: SparkSession, built: Any, table: str, ecfg: ExpiryConfig, sql: str, run_dir: Path, progress: bool
) -> dict[str, Any]:
    ds = built.dataset
    points = replay(spark, built, table, ecfg, sql, run_dir, progress)
    t0 = time.perf_counter()
    before = spark_checksums(spark, table)  # a full read: the longest query of the run
    full_read_ms = (time.perf_counter() - t0) * 1e3
    limit = cutoff(spark, table, ecfg.commits_per_day, ecfg.retain_days)
    expired: dict[str, Any] = {}
    retained_s = None
    if limit is not None:
        retained_s = (dt.datetime.now() - limit).total_seconds()
        short = table.split(".", 1)[1]
        row = spark.sql(
            f"CALL {ds.catalog}.system.expire_snapshots(table => '{short}', "
            f"older_than => TIMESTAMP '{limit.isoformat(sep=' ')}', retain_last => 1)"
        ).first()
        expired = row.asDict()
    after_point = probe(spark, table, sql, ecfg.probe_repetitions, -1)
    points.append(
        {"phase": "after_expiry", "sim_day": points[-1]["sim_day"], "append_ms": None, **after_point}
    )
    write_parquet(run_dir / "timeline.parquet", pd.DataFrame(points))
    after = spark_checksums(spark, table)
    rows = sum(n for n, _ in after.values())
    longest_ms = max([full_read_ms, *(p["planning_ms"] for p in points)])
    summary = {
        "table": table,
        "cutoff_utc": limit.isoformat() if limit else None,
        "retained_s": retained_s,
        "longest_query_ms": longest_ms,
        "retention_warning": retention_warning(retained_s, longest_ms),
        "expired": expired,
        "before": points[-2],
        "after": points[-1],
        "rows": rows,
        "checksum": sum(c for _, c in after.values()),
        "unchanged": before == after,
        "expected_rows": ds.config.total_rows,
    }
    write_json(run_dir / "expiry.json", summary)
    return summary
