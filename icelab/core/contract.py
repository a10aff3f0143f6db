"""The results contract: one tidy `measurements.parquet` per run, and its validator.

One row per (query, variant, window, repetition), warm-ups included and flagged. Every run
directory also holds `env.json` (machine, versions, Spark settings, git, dataset), the resolved
`config.yaml` and `run.json` (what was planned, what ran, how it ended). The validator is what
CI runs on the smoke benchmark: `icelab contract results/runs/smoke` (its newest run, whatever
its status; the command is `icelab.tools.contract`). `icelab validate` checks every run of a
results directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from icelab.core import run_state

MEASUREMENTS = "measurements.parquet"
REQUIRED_FILES = (MEASUREMENTS, "env.json", "config.yaml", "run.json")

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("experiment", pa.string()),
        ("query_id", pa.string()),
        ("query_sha256", pa.string()),
        ("dataset", pa.string()),
        ("format", pa.string()),  # parquet | iceberg
        ("profile", pa.string()),  # Iceberg table state; "none" for Parquet
        ("setup", pa.string()),  # canonical: the reading setup (conf/setup/); null elsewhere
        ("variant", pa.string()),  # format/profile (or format/setup), the label on the charts
        ("window", pa.string()),
        ("window_hours", pa.float64()),
        ("repetition", pa.int32()),  # warm-ups count from -warmups to -1; steady-state ones on below
        ("warmup", pa.bool_()),
        # 0; 1 for a measured repetition measured again because its first was marked a stall, a
        # garbage collection or an outlier (icelab/bench/stalls.py), so that the cell keeps its n.
        ("retake", pa.int32()),
        ("executed", pa.bool_()),  # false: planned only (protocol.executions)
        ("planning_ms", pa.float64()),
        ("iceberg_planning_ms", pa.float64()),  # Iceberg's own ScanReport totalPlanningDuration
        ("execution_ms", pa.float64()),
        ("total_ms", pa.float64()),
        ("rows_out", pa.int64()),
        # "<rows>:<hex>": order-insensitive, engine-independent (icelab.bench.measure.result_checksum:
        # floats and decimals to six significant digits, whole ones as integers).
        ("result_checksum", pa.string()),
        ("scan_nodes", pa.int32()),  # 0: answered without scanning (aggregate push-down)
        ("manifests_total", pa.int64()),
        ("manifests_scanned", pa.int64()),
        ("manifests_skipped", pa.int64()),
        ("files_scanned", pa.int64()),
        ("files_skipped", pa.int64()),
        ("partitions_scanned", pa.int64()),
        ("bytes_scanned", pa.int64()),
        ("catalog_ms", pa.float64()),
        # S3 requests the measurement sent (planning and execution), from S3A's own counters
        # (icelab/core/storage.py: S3A_REQUESTS); null where the data is not on S3A.
        ("s3_requests", pa.int64()),
        ("s3_list_requests", pa.int64()),
        ("s3_head_requests", pa.int64()),
        ("s3_get_requests", pa.int64()),
        ("s3_retries", pa.int64()),
        # The milliseconds those requests took (summed), and the longest of them when it was the
        # session's longest so far (S3A keeps only that maximum; null otherwise).
        ("s3_request_ms", pa.float64()),
        ("s3_longest_ms", pa.float64()),
        # The delay proxy's longest request of the measurement, head to first byte back, when the
        # proxy is in the path (icelab/core/object_store/proxy.py); null otherwise.
        ("proxy_longest_ms", pa.float64()),
        # Garbage collection during the measurement (the driver JVM's, and a cluster's executors'),
        # and how long the driver JVM or the Python process stood still (icelab/bench/stalls.py).
        ("gc_ms", pa.float64()),
        ("pause_ms", pa.float64()),
        # How long a task stood off the CPU beyond the rest of its stage (a stopped executor), for
        # a measurement of at least stalls.STALL_MS (icelab/bench/task_clock.py); null otherwise.
        ("task_stall_ms", pa.float64()),
        # The faults the delay proxy dealt the measurement (`slowdown=1,stall=2`), a worker lost
        # (`worker_lost=1`), or what its own clocks showed (`stall=20.5`, `gc=1.2`, `outlier`:
        # icelab/bench/stalls.py), and whether it met a fault or a retry (icelab/bench/store_watch.py,
        # cluster_watch.py); a faulted row is left out of medians.
        ("faults", pa.string()),
        ("faulted", pa.bool_()),
        # From the physical plan (icelab/bench/plan_check.py): what reached the scan.
        ("pushed_filters", pa.string()),
        ("nested_filters_pushed", pa.int32()),
        ("read_leaves", pa.int32()),
        ("nested_pruned", pa.bool_()),
        ("vectorized", pa.bool_()),
        ("status", pa.string()),  # ok | error (what went wrong is in `error`)
        ("error", pa.string()),
        ("measured_utc", pa.string()),
    ]
)
COLUMNS = SCHEMA.names
# How a row the protocol cancelled at protocol.timeout_s begins its `error` (icelab.bench.measure).
TIMED_OUT = "cancelled after protocol.timeout_s="
# How a row begins whose measurement did not fit the driver's heap (a java.lang.OutOfMemoryError),
# followed by the session's spark.driver.memory (icelab.bench.measure).
OUT_OF_MEMORY = "out of memory at spark.driver.memory="
# Rows that record a limit the run was configured with, not a breach: the cell's outcome.
OUTCOMES = (TIMED_OUT, OUT_OF_MEMORY)


def to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows (dicts) as a table in the contract's schema; unknown keys are an error."""
    extra = {k for row in rows for k in row} - set(COLUMNS)
    if extra:
        raise ValueError(f"columns outside the contract: {sorted(extra)}")
    return pa.Table.from_pylist([{c: row.get(c) for c in COLUMNS} for row in rows], schema=SCHEMA)


def read_measurements(run_dir: Path) -> pd.DataFrame:
    """A run's measurements as a frame in the contract's columns.

    Columns the contract gained after the run was written come back as nulls of their type, so
    older runs still chart and compare; `validate` still reports them as a schema difference.
    """
    return _with_new_columns(pq.read_table(run_dir / MEASUREMENTS)).to_pandas()


def _with_new_columns(table: pa.Table) -> pa.Table:
    """`table` with the contract's columns it lacks added as nulls, in the contract's order."""
    for field in SCHEMA:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    extra = [c for c in table.column_names if c not in COLUMNS]
    return table.select([*COLUMNS, *extra])


def missing_columns(schema: pa.Schema) -> list[str] | None:
    """The columns an older run lacks when its schema is the contract's minus columns the contract
    gained since (every column it has is the contract's, with the contract's type); None when
    the schema differs in any other way."""
    if any(f.name not in COLUMNS or SCHEMA.field(f.name).type != f.type for f in schema):
        return None
    return [c for c in COLUMNS if c not in schema.names]


def _answers_agree(table: pa.Table) -> list[str]:
    """Every executed ok row of one (query, window) must carry the same result checksum."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for row in table.select(
        ["query_id", "window", "variant", "executed", "status", "result_checksum"]
    ).to_pylist():
        if row["executed"] and row["status"] == "ok":
            seen.setdefault((row["query_id"], row["window"]), {})[row["variant"]] = row["result_checksum"]
    problems = []
    for (query, window), by_variant in sorted(seen.items()):
        if len(set(by_variant.values())) > 1:
            problems.append(f"{query} {window}: answers differ between variants {by_variant}")
    return problems


def validate(run_dir: Path, allow_failures: bool = False, allow_older: bool = False) -> list[str]:
    """Everything wrong with a run directory; an empty list means it meets the contract.

    Args:
        allow_failures: failed measurements are not a breach.
        allow_older: a run lacking only columns the contract gained since (`missing_columns`) is
            checked as if they were null, instead of failing on its schema.
    """
    missing = [f for f in REQUIRED_FILES if not (run_dir / f).is_file()]
    if missing:
        return [f"missing {', '.join(missing)}"]
    table = pq.read_table(run_dir / MEASUREMENTS)
    problems = []
    if allow_older and missing_columns(table.schema):
        table = _with_new_columns(table)
    if not table.schema.equals(SCHEMA, check_metadata=False):
        got = {f.name: str(f.type) for f in table.schema}
        want = {f.name: str(f.type) for f in SCHEMA}
        diff = {
            k: (got.get(k), want.get(k)) for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)
        }
        problems.append(f"schema differs from the contract (column: got, want): {diff}")
        return problems
    run = json.loads((run_dir / "run.json").read_text())
    status = run_state.status(run_dir)  # a killed run's "running" reads "abandoned"
    if status != "complete":
        problems.append(run_state.not_complete(status))
    # The steady-state phase adds as many warm-up rows as its cases needed (protocol.steady_k).
    steady = (run.get("steady_state") or {}).get("rows", 0)
    # A marked measured row is measured again (`retake` 1): those rows come on top.
    retakes = run.get("retakes") or 0
    if table.num_rows != (run.get("planned_rows") or 0) + steady + retakes:
        extra = f" (+ {steady} steady-state warm-ups)" if steady else ""
        extra += f" (+ {retakes} retakes)" if retakes else ""
        problems.append(f"{table.num_rows} rows, but {run.get('planned_rows')}{extra} were planned")
    # A run may measure several datasets (metadata_scale: one per table state).
    keys = ["dataset", "query_id", "variant", "window", "repetition", "retake"]
    unique = {tuple(r.values()) for r in table.select(keys).to_pylist()}
    if len(unique) != table.num_rows:
        problems.append(
            f"{table.num_rows - len(unique)} duplicate (dataset, query, variant, window, repetition, "
            "retake) rows"
        )
    # A measurement the protocol cancelled at its configured timeout, or one that did not fit the
    # configured driver heap, is an outcome of the run's configuration: recorded, not a breach.
    failed = [
        r
        for r in table.select(["status", "error", "query_id", "variant"]).to_pylist()
        if r["status"] != "ok" and not str(r["error"]).startswith(OUTCOMES)
    ]
    if failed and not allow_failures:
        e = failed[0]
        problems.append(
            f"{len(failed)} failed measurements, e.g. {e['query_id']} {e['variant']}: {e['error']}"
        )
    statuses = table.column("status").to_pylist()
    ok_planning = [
        p for p, s in zip(table.column("planning_ms").to_pylist(), statuses, strict=True) if s == "ok"
    ]
    if any(p is None or p <= 0 for p in ok_planning):
        problems.append("an ok measurement without a positive planning_ms")
    env = json.loads((run_dir / "env.json").read_text())
    for key in ("machine", "versions", "git", "spark_conf", "dataset"):
        if key not in env:
            problems.append(f"env.json lacks '{key}'")
    return problems + _answers_agree(table)
