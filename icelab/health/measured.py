"""Planning measured on the table itself, beside the cost model's prediction: per time window the
doctor reports, a count query filtered to exactly that window is planned (never executed) through
the doctor's Spark session, timed as the benchmarks time planning (`icelab.bench.measure`), with
Iceberg's own scan metrics of the plan; and the driver's heap, read from its JVM.

Planning reads metadata only, so measuring writes nothing to the table.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from pyspark.sql import SparkSession

from icelab.bench.measure import measure
from icelab.health.check import time_field, utc_text
from icelab.health.reader import Metadata
from icelab.health.source import Source
from icelab.health.spec import DAY_US

# Untimed plans before the timed ones: the first plan of a table loads classes and warms caches.
WARMUPS = 1
# The view a table read by its metadata file is planned through (it has no name in a catalog).
VIEW = "icelab_doctor_measured"
NOT_MEASURED = {"measured_ms": None, "measured_plans": 0, "manifests_scanned": None}


def table_sql(spark: SparkSession, source: Source) -> str:
    """How Spark SQL names the table: its catalog name, or a view on its metadata file."""
    if source.name:
        return source.name
    spark.read.format("iceberg").load(source.location).createOrReplaceTempView(VIEW)
    return VIEW


def _quoted(column: str) -> str:
    return ".".join(f"`{part}`" for part in column.split("."))


def literal(type_name: str, micros: int) -> str:
    """An instant as a Spark SQL literal of the column's type (a date: the day holding it)."""
    text = utc_text(micros)
    if type_name == "date":
        return f"DATE '{utc_text(micros // DAY_US * DAY_US)[:10]}'"
    if type_name == "timestamp_ntz":
        return f"TIMESTAMP_NTZ '{text[:26]}'"
    return f"TIMESTAMP '{text}'"


def window_query(table: str, column: str, type_name: str, window: dict[str, Any]) -> str:
    """The count query selecting exactly the window `check.window_kept` describes, [start, end) on
    the time field's source column."""
    col = _quoted(column)
    start, end = window["start_us"], window["end_us"]
    return (
        f"SELECT count(*) FROM {table} "
        f"WHERE {col} >= {literal(type_name, start)} AND {col} < {literal(type_name, end)}"
    )


def planned(
    spark: SparkSession, sql: str, plans: int, budget_s: float | None = None, warmups: int = WARMUPS
) -> dict[str, Any]:
    """`plans` timed plans of `sql` after `warmups` untimed ones: the median planning (ms, to 0.1),
    how many plans it is of, and the data manifests Iceberg scanned; an error instead of a time
    when a plan failed. When the warm-ups and `plans` more plans as slow as the last warm-up
    would pass `budget_s`, that warm-up is the one plan measured (`measured_cold`)."""
    warm = [measure(spark, sql, execute=False) for _ in range(warmups)]
    slow = (warm[-1].planning_ms or 0.0) if warm else 0.0
    cold = budget_s is not None and bool(warm) and slow * (warmups + plans) / 1000 > budget_s
    runs = warm[-1:] if cold else [measure(spark, sql, execute=False) for _ in range(plans)]
    failed = next((m for m in (*warm, *runs) if m.status != "ok"), None)
    if failed is not None:
        return NOT_MEASURED | {"measure_error": failed.error}
    return {
        "measured_ms": round(statistics.median(m.planning_ms or 0.0 for m in runs), 1),
        "measured_plans": len(runs),
        "measured_cold": cold,
        "manifests_scanned": runs[-1].scan.get("manifests_scanned"),
    }


def measure_windows(
    spark: SparkSession,
    source: Source,
    meta: Metadata,
    windows: list[dict[str, Any]],
    plans: int,
    budget_s: float | None = None,
    warmups: int = WARMUPS,
) -> None:
    """Add measured_ms, measured_plans and manifests_scanned to each window (in place); with
    `plans` 0 nothing is planned (measured_plans 0, no time).

    Args:
        warmups: untimed plans of each window before its timed ones.
        budget_s: seconds the measuring may take on this table (None: no limit). A window whose
            plans would pass what is left is measured by one cold plan; once the budget is spent,
            the windows left are not measured (`measure_skipped` says why). The first window is
            always measured, by one plan at least. On a 10M-entry table
            one plan takes about a minute, and the doctor should answer in two.
    """
    found = time_field(meta)
    if plans <= 0 or found is None or not windows:
        for w in windows:
            w.update(NOT_MEASURED)
        return
    column = found[1].source
    if column is None:
        for w in windows:
            w.update(NOT_MEASURED | {"measure_error": "the time field's source column was dropped"})
        return
    table = table_sql(spark, source)
    type_name = spark.sql(f"SELECT {_quoted(column)} FROM {table}").schema[0].dataType.typeName()
    t0 = time.perf_counter()
    for i, w in enumerate(windows):
        left = None if budget_s is None else budget_s - (time.perf_counter() - t0)
        if left is not None and left <= 0 and i > 0:  # the first window always gets a plan
            w.update(NOT_MEASURED | {"measure_skipped": f"the measuring budget ({budget_s:g} s) was spent"})
            continue
        w.update(planned(spark, window_query(table, column, type_name, w), plans, left, warmups))


def reset_heap_peak(spark: SparkSession) -> None:
    """Start the driver's heap peak afresh, so it is this run's."""
    for pool in spark.sparkContext._jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans():
        pool.resetPeakUsage()


def driver_heap(spark: SparkSession) -> dict[str, int]:
    """The driver JVM's heap: the peak used since `reset_heap_peak` (the sum of its heap pools'
    peaks) and the most it may grow to."""
    factory = spark.sparkContext._jvm.java.lang.management.ManagementFactory
    peak = sum(
        int(p.getPeakUsage().getUsed())
        for p in factory.getMemoryPoolMXBeans()
        if str(p.getType().toString()) == "Heap memory"
    )
    return {
        "driver_heap_peak_bytes": peak,
        "driver_heap_max_bytes": int(factory.getMemoryMXBean().getHeapMemoryUsage().getMax()),
    }
