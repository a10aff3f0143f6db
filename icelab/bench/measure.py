"""One query -> planning_ms, execution_ms, scan metrics, rows and a result checksum.

Planning is everything from SQL text until every scan's splits are known, with no data read:
`spark.sql(q)`, `executedPlan()`, then `inputRDD().partitions()` on each scan node (that is
where Parquet lists files and Iceberg reads manifests). The scan nodes' metrics are read right
then, because execution resets them. Execution is `collect()` on the same QueryExecution, so
nothing is planned twice; this holds with AQE on and off, since the adaptive plan executes the
very scan nodes planned here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, Row, SparkSession

from icelab.bench import plan_check
from icelab.core import failpoints
from icelab.core.contract import OUT_OF_MEMORY, TIMED_OUT
from icelab.core.jvm import jvm_pid, stop_jvm

# Scan-node metric -> result column. Iceberg's come from its ScanReport via BatchScanExec.
ICEBERG_METRICS = {
    "totalPlanningDuration": "iceberg_planning_ms",
    "totalDataManifest": "manifests_total",
    "scannedDataManifests": "manifests_scanned",
    "skippedDataManifests": "manifests_skipped",
    "resultDataFiles": "files_scanned",
    "skippedDataFiles": "files_skipped",
    "totalDataFileSize": "bytes_scanned",
}
PARQUET_METRICS = {
    "numFiles": "files_scanned",
    "numPartitions": "partitions_scanned",
    "filesSize": "bytes_scanned",
    "metadataTime": "catalog_ms",
}


@dataclass
class Measurement:
    """What one execution of one query measured."""

    planning_ms: float | None = None
    execution_ms: float | None = None
    total_ms: float | None = None
    rows_out: int | None = None
    result_checksum: str | None = None
    executed: bool = False
    scan_nodes: int | None = None
    scan: dict[str, int] = field(default_factory=dict)
    plan: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None
    planted_ms: float = 0.0  # a test's planted slowdown inside execution_ms; not a column

    def as_row(self) -> dict[str, Any]:
        """Flat dict: scan metrics and plan facts become columns."""
        row = asdict(self)
        row.pop("planted_ms")
        return {**row.pop("scan"), **row.pop("plan"), **row}


def _children(node: Any) -> list[Any]:
    kids = node.children()
    found = [kids.apply(i) for i in range(kids.size())]
    if node.nodeName() == "AdaptiveSparkPlan":
        found.append(node.inputPlan())  # AQE's initial plan: the nodes that will execute
    return found


def scan_nodes(plan: Any) -> list[Any]:
    """Every file scan (BatchScanExec for Iceberg, FileSourceScanExec for Parquet) in a plan."""
    scans, stack = [], [plan]
    while stack:
        node = stack.pop()
        cls = node.getClass().getSimpleName()
        if cls in ("BatchScanExec", "FileSourceScanExec"):
            scans.append(node)
        else:
            stack.extend(_children(node))
    return scans


def _metrics(scan: Any) -> dict[str, int]:
    names = ICEBERG_METRICS if scan.getClass().getSimpleName() == "BatchScanExec" else PARQUET_METRICS
    metrics = scan.metrics()
    return {col: int(metrics.apply(k).value()) for k, col in names.items() if metrics.contains(k)}


def _sum_metrics(scans: list[Any]) -> dict[str, int]:
    total: dict[str, int] = {}
    for scan in scans:
        for key, value in _metrics(scan).items():
            total[key] = total.get(key, 0) + value
    return total


def canonical(value: Any) -> Any:
    """One engine-independent form of a result value, so Spark's and DuckDB's rows compare.

    Structs and maps (Spark Row / dict, DuckDB dict) become key-sorted pairs, arrays tuples,
    timestamps epoch microseconds (aware or, as PySpark returns them, local), and floating
    point and decimal numbers six significant digits, since engines sum doubles in different
    orders. A rounded number that is whole becomes an int, so `3`, `3.0` and `Decimal('3.00')`
    hash alike (one engine's average may be another's integer); integers are never rounded, so
    `1234567` and `1234567.0` (rounded to 1234570) do not.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (float, Decimal)):
        rounded = float(f"{float(value):.6g}")
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, Row):
        value = value.asDict()
    if isinstance(value, dict):
        return tuple(sorted(((k, canonical(v)) for k, v in value.items()), key=lambda kv: str(kv[0])))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, dt.datetime):
        return round(value.timestamp() * 1_000_000)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return repr(value)


def result_checksum(rows: list[Any]) -> str:
    """Order-insensitive checksum of a result: the sum of 60-bit prefixes of each row's md5.

    Each row is hashed in its canonical form (`canonical`), column by column in order.
    """
    digests = (hashlib.md5(repr(tuple(canonical(v) for v in r)).encode()).hexdigest() for r in rows)
    total = sum(int(d[:15], 16) for d in digests)
    return f"{len(rows)}:{total:x}"


# What a Java OutOfMemoryError's line reads (error_text keeps it): "Java heap space", "GC
# overhead limit exceeded" and the rest all begin so.
JAVA_OOM = "java.lang.OutOfMemoryError"


class SessionEnded(Exception):
    """A measurement ran on past its timeout and grace, so its driver JVM was ended.

    Carries the measurement (an error row). The session is gone: whoever measures next needs a
    new one (`icelab.bench.context.Context.reopen`).
    """

    def __init__(self, measurement: Measurement) -> None:
        super().__init__(measurement.error)
        self.measurement = measurement


@contextmanager
def deadline(spark: SparkSession, timeout_s: float | None, grace_s: float) -> Iterator[dict[str, Any]]:
    """Stop a measurement once `timeout_s` has passed (None: never), by the least that works.

    First every Spark job of the session is cancelled (an execution, Iceberg's distributed
    planning) and the JVM thread serving this Python thread is interrupted (local planning runs
    there, in no job); the measurement then fails into an error row and the session goes on.
    Work that heeds neither (a driver thrashing in garbage collection) is still running
    `grace_s` later: then the driver JVM is ended (`stop_jvm`), since a py4j call cannot be
    abandoned any other way. The dict says whether the deadline fired, and whether (and which)
    JVM was ended.
    """
    fired: dict[str, Any] = {"fired": False, "ended_jvm": False, "jvm_pid": None}
    if not timeout_s:
        yield fired
        return
    # PySpark pins each Python thread to a JVM thread of its own: this one will run the query.
    worker = spark._jvm.java.lang.Thread.currentThread()
    done, lock = threading.Event(), threading.Lock()

    def stop() -> None:
        with lock:
            if done.is_set():
                return
            fired["fired"] = True
            # A JVM too far gone to answer these is ended below.
            with contextlib.suppress(Exception):
                spark.sparkContext.cancelAllJobs()
            with contextlib.suppress(Exception):
                worker.interrupt()
        if done.wait(grace_s):
            return
        with lock:
            if done.is_set():
                return
            fired["ended_jvm"] = True
        fired["jvm_pid"] = jvm_pid()
        stop_jvm(grace_s=5.0)

    timer = threading.Thread(target=lambda: None if done.wait(timeout_s) else stop(), daemon=True)
    timer.start()
    try:
        yield fired
    finally:
        with lock:
            done.set()
        if fired["ended_jvm"]:
            timer.join()  # the JVM is gone once this returns
        elif fired["fired"]:
            # An interrupt that landed after the work ended would fail this thread's next read.
            spark._jvm.java.lang.Thread.interrupted()


def measure(
    spark: SparkSession,
    sql: str,
    execute: bool = True,
    slow_by: float = 0.0,
    timeout_s: float | None = None,
    grace_s: float = 60.0,
) -> Measurement:
    """Plan, then (unless `execute` is false) execute, one query.

    A failure is a measurement with its error, not a crash; so is a measurement stopped after
    `timeout_s` (`deadline`). `slow_by` (tests of the statistics only: SetupConfig.plant) sleeps
    that fraction of the execution's own time before the execution timer stops.

    Raises:
        SessionEnded: the measurement ran `grace_s` past its timeout and its driver JVM was
            ended; the exception carries the error row.
    """
    with deadline(spark, timeout_s, grace_s) as fired:
        try:
            out = _measure(spark, sql, execute, slow_by)
        except Exception:
            # The call broke because the deadline ended the JVM (PySpark fails oddly then).
            if not fired["ended_jvm"]:
                raise
    if fired["ended_jvm"]:
        out = Measurement(
            status="error",
            error=f"{TIMED_OUT}{timeout_s:g}: still running {grace_s:g} s after its jobs were "
            f"cancelled and its thread interrupted; the driver JVM (pid {fired['jvm_pid']}) was ended",
        )
        raise SessionEnded(out)
    if fired["fired"] and out.status == "error":
        out.error = f"{TIMED_OUT}{timeout_s:g}: {out.error}"[:500]
    elif out.status == "error" and JAVA_OOM in str(out.error):
        heap = spark.sparkContext.getConf().get("spark.driver.memory", "1g")
        out.error = f"{OUT_OF_MEMORY}{heap}: {out.error}"[:500]
    return out


def out_of_memory(m: Measurement) -> bool:
    """Whether the measurement failed for want of driver heap (its row says so)."""
    return m.status == "error" and str(m.error).startswith(OUT_OF_MEMORY)


def error_text(exc: Exception) -> str:
    """A failure in one line: its first, and for a Java exception PySpark did not convert, the
    Java exception's own (py4j's first line names only the call, `An error occurred while calling
    o42.executedPlan.`; the cause, such as `java.lang.OutOfMemoryError: Java heap space`, follows)."""
    lines = str(exc).strip().splitlines()
    cause = next((line[2:].strip() for line in lines[1:] if line.startswith(": ")), None)
    return (f"{lines[0]} {cause}" if cause else lines[0])[:500]


def plan_query(spark: SparkSession, sql: str) -> tuple[DataFrame, Any, list[Any]]:
    """Plan one query the way a measurement times it: the executed plan, with every scan's input
    partitions made (Iceberg plans its files there). The DataFrame, plan and scan nodes."""
    df = spark.sql(sql)
    plan = df._jdf.queryExecution().executedPlan()
    scans = scan_nodes(plan)
    for scan in scans:
        scan.inputRDD().partitions()
    return df, plan, scans


def _measure(spark: SparkSession, sql: str, execute: bool, slow_by: float) -> Measurement:
    out = Measurement()
    try:
        t0 = time.perf_counter_ns()
        failpoints.stall("measure.plan", spark)
        failpoints.oom("measure.plan", spark)
        df, plan, scans = plan_query(spark, sql)
        t1 = time.perf_counter_ns()
        out.planning_ms = (t1 - t0) / 1e6
        out.scan, out.scan_nodes = _sum_metrics(scans), len(scans)
        out.plan = plan_check.facts(scans)
        if not execute:
            return out
        rows = df.collect()
        if slow_by > 0:
            out.planted_ms = (time.perf_counter_ns() - t1) / 1e6 * slow_by
            time.sleep(out.planted_ms / 1e3)
        t2 = time.perf_counter_ns()
    except (Py4JJavaError, PySparkException) as exc:
        out.status, out.error = "error", error_text(exc)
        return out
    out.executed = True
    out.execution_ms = (t2 - t1) / 1e6
    out.total_ms = (t2 - t0) / 1e6
    out.rows_out = len(rows)
    out.result_checksum = result_checksum(rows)
    return out


def plain_collect_ms(spark: SparkSession, sql: str) -> float | None:
    """The same query with a plain collect and one timer: the reference for measure()'s overhead;
    None when it failed (a store's connection reset mid-read, which S3A does not retry: the pair
    is then left out of the overhead, as measure() keeps its own failure as an error row)."""
    t0 = time.perf_counter_ns()
    try:
        spark.sql(sql).collect()
    except (Py4JJavaError, PySparkException):
        return None
    return (time.perf_counter_ns() - t0) / 1e6


def overhead_pairs(spark: SparkSession, sql: str, pairs: int) -> list[dict[str, Any]]:
    """`pairs` alternations of measure() and a plain collect of the same query, each with its
    wall-clock span (`span_s`, epoch seconds).

    The difference of their totals is what splitting the timer and reading metrics costs.
    """
    out = []
    for pair in range(pairs):
        # Wall clock around the pair (epoch seconds): whether it ran across a store outage.
        start_s = time.time()
        measured = measure(spark, sql).total_ms
        plain = plain_collect_ms(spark, sql)
        out.append(
            {"pair": pair, "measured_total_ms": measured, "plain_ms": plain, "span_s": (start_s, time.time())}
        )
    return out
