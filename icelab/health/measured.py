"""Planning measured on the table itself: per time window the doctor reports, a count query
filtered to exactly that window is planned (never executed) through the doctor's Spark session,
timed as the benchmarks time planning (`icelab.bench.measure`), with Iceberg's own scan metrics of
the plan; and the driver's heap, read from its JVM.

Every plan names its snapshot (`VERSION AS OF`), so the figures of one state are of one snapshot
whatever other writers commit meanwhile. Plans are taken in rounds: each round plans every window
of every state once, the states in alternating order, so that the JVM's warming (the first plans
of a query in a session are slower) falls on every window and state alike. Warm-up rounds come
first and are not timed. After the minimum rounds, a caller's `enough` test may stop the rounds
early or ask for more, up to MAX_FACTOR times the minimum: measure enough plans to decide, and no
more.

Planning reads metadata only, so measuring writes nothing to the table.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from scipy import stats

from icelab.bench.measure import measure
from icelab.health.check import time_field, utc_text
from icelab.health.reader import Metadata
from icelab.health.source import Source
from icelab.health.spec import DAY_US

# Untimed rounds before the timed ones: the first plans of a table load classes and warm the JIT
# (on a table of 150 manifests the first 1d plan took 1,490 ms, the third 69 ms, the median of
# the rest 43 ms).
WARMUPS = 2
# ... and further untimed rounds while this Spark session has planned for under WARMUP_S seconds
# in all (at most MAX_WARMUPS rounds): the JIT warms a JVM, not a table, so the first table a
# session checks pays it and the next ones do not. A 40-manifest table planned 1d in 278 ms after
# 2 rounds, 185 ms later on; in a doctor catalogue run with 3 s of warming the first shape's fixed
# plan was still twice the later shapes'.
WARMUP_S = 6.0
MAX_WARMUPS = 30
# The rounds `enough` may ask for, as a multiple of the minimum.
MAX_FACTOR = 3
# Rounds until steady may go on to this multiple of the minimum (then: "round cap").
MAX_STEADY_FACTOR = 8
STEADY, TIME_CAP, ROUND_CAP, ROUNDS_DONE = "steady", "time cap", "round cap", "rounds done"
# Level of the interval of a window's median plan (distribution-free, from order statistics).
LEVEL = 0.95
# The view a table read by its metadata file is planned through (it has no name in a catalog).
VIEW = "icelab_doctor_measured"
NOT_MEASURED = {"measured_ms": None, "measured_plans": 0, "manifests_scanned": None}


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
    the time field's source column; `table` may carry its `VERSION AS OF`."""
    col = _quoted(column)
    start, end = window["start_us"], window["end_us"]
    return (
        f"SELECT count(*) FROM {table} "
        f"WHERE {col} >= {literal(type_name, start)} AND {col} < {literal(type_name, end)}"
    )


def table_sql(spark: SparkSession, source: Source, snapshot_id: int | None = None) -> str:
    """How Spark SQL names the table at `snapshot_id` (None: its current snapshot): its catalog
    name with `VERSION AS OF`, or a view on its metadata file read at that snapshot."""
    if source.name:
        return source.name + (f" VERSION AS OF {snapshot_id}" if snapshot_id is not None else "")
    reader = spark.read.format("iceberg")
    if snapshot_id is not None:
        reader = reader.option("snapshot-id", str(snapshot_id))
    view = f"{VIEW}_{abs(snapshot_id)}" if snapshot_id is not None else VIEW
    reader.load(source.location).createOrReplaceTempView(view)
    return view


def median_range(plans: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    """A distribution-free interval of the median of `plans`: the order statistics whose binomial
    coverage is at least `level`, or the smallest and largest plan when there are too few."""
    ordered = sorted(plans)
    n = len(ordered)
    for k in range((n - 1) // 2, -1, -1):
        # P(X_(k+1) <= median <= X_(n-k)) = 1 - 2 P(Binomial(n, 1/2) <= k)
        if 1 - 2 * stats.binom.cdf(k, n, 0.5) >= level:
            return ordered[k], ordered[n - 1 - k]
    return ordered[0], ordered[-1]


def steady(plans: Sequence[float], block: int) -> bool:
    """Whether a cell's plans are at steady state: its last two blocks of `block` plans have
    medians that agree within their noise, each median inside the other block's interval of its
    median (`median_range`). The first rounds of a session run slow (the JIT, the page cache): a
    median taken over them is not the plan's cost."""
    if block < 1 or len(plans) < 2 * block:
        return False
    earlier, later = plans[-2 * block : -block], plans[-block:]
    m_earlier, m_later = statistics.median(earlier), statistics.median(later)
    low_e, high_e = median_range(earlier)
    low_l, high_l = median_range(later)
    return low_e <= m_later <= high_e and low_l <= m_earlier <= high_l


@dataclass
class State:
    """One table state to plan: how SQL names it (at its snapshot) and its windows (updated in place)."""

    label: str
    table: str
    snapshot_id: int | None
    column: str
    type_name: str
    windows: list[dict[str, Any]]

    def sql(self, w: dict[str, Any]) -> str:
        return window_query(self.table, self.column, self.type_name, w)


def state_of(
    spark: SparkSession, label: str, source: Source, meta: Metadata, windows: list[dict[str, Any]]
) -> State | None:
    """The state to plan, or None when there is nothing to plan (each window then says why)."""
    found = time_field(meta)
    if found is None or not windows:
        for w in windows:
            w.update(NOT_MEASURED)
        return None
    column = found[1].source
    if column is None:
        for w in windows:
            w.update(NOT_MEASURED | {"measure_error": "the time field's source column was dropped"})
        return None
    table = table_sql(spark, source, meta.current_snapshot_id)
    type_name = spark.sql(f"SELECT {_quoted(column)} FROM {table}").schema[0].dataType.typeName()
    return State(label, table, meta.current_snapshot_id, column, type_name, windows)


def _summary(plans: list[float], cold: bool, scanned: int | None, snapshot_id: int | None) -> dict[str, Any]:
    low, high = median_range(plans)
    return {
        "measured_ms": round(statistics.median(plans), 1),
        "measured_plans": len(plans),
        "measured_range_ms": [round(low, 1), round(high, 1)],
        "plans_ms": [round(p, 1) for p in plans],
        "measured_cold": cold,
        "manifests_scanned": scanned,
        "measured_snapshot_id": snapshot_id,
    }


def measure_states(
    spark: SparkSession,
    states: Sequence[State],
    plans: int,
    budget_s: float | None = None,
    warmups: int = WARMUPS,
    enough: Callable[[], bool] | None = None,
    until_steady: bool = False,
) -> dict[str, Any]:
    """Plan every window of every state in interleaved rounds and add to each window its median
    plan (measured_ms), its plans and their interval, the manifests Iceberg scanned, and the
    snapshot planned (in place); how the rounds went (rounds, stopped, seconds).

    Args:
        plans: timed rounds at least (0: nothing is planned).
        budget_s: seconds all of it may take (None: no limit). The first warm-up round gives each
            window's cost; a window whose plans would pass what is left of the budget is measured
            by that one cold plan (`measured_cold`); once the budget is spent, the windows left are
            not planned (`measure_skipped` says why). The first window is always planned once.
        warmups: untimed rounds before the timed ones.
        enough: asked after the minimum rounds and each one after; False asks for one more round,
            up to MAX_FACTOR x `plans` (None: exactly `plans` rounds).
        until_steady: rounds go on until every cell is `steady` (blocks of `plans` plans), the
            budget is spent ("time cap") or MAX_STEADY_FACTOR x `plans` rounds ran ("round cap");
            each cell's figures are then its last two blocks' (`enough` is not asked).
    """
    cells = [(s, w) for s in states for w in s.windows]
    if plans <= 0 or not cells:
        for _, w in cells:
            w.update(NOT_MEASURED)
        return {"rounds": 0, "stopped": None, "seconds": 0.0}
    t0 = time.perf_counter()

    def left() -> float | None:
        return None if budget_s is None else budget_s - (time.perf_counter() - t0)

    cost: dict[int, float] = {}
    cold: dict[int, Any] = {}
    r = 0
    while r < max(warmups, 1) or _warming(spark, t0, r, budget_s, cost):
        for i, (s, w) in enumerate(cells):
            if i in cold:
                continue
            remaining = left()
            if r == 0 and remaining is not None and remaining <= 0 and i > 0:
                spent = f"the measuring budget ({budget_s:g} s) was spent"
                w.update(NOT_MEASURED | {"measure_skipped": spent})
                cold[i] = None
                continue
            m = measure(spark, s.sql(w), execute=False)
            if m.status != "ok":
                w.update(NOT_MEASURED | {"measure_error": m.error})
                cold[i] = None
                continue
            cost[i] = (m.planning_ms or 0.0) / 1000
            _planned(spark, cost[i])
            remaining = left()
            if r == 0 and remaining is not None and cost[i] * (warmups - 1 + plans) > remaining:
                # Its plans would pass the budget: this plan is its one measurement.
                cold[i] = m
                scanned_now = m.scan.get("manifests_scanned")
                w.update(_summary([m.planning_ms or 0.0], True, scanned_now, s.snapshot_id))
        r += 1
    timed = {i: [] for i in range(len(cells)) if i not in cold}
    scanned: dict[int, int | None] = {}
    kept = 2 * plans if until_steady else None  # the plans a cell's figures are of
    stopped, rounds = ROUND_CAP, 0
    for r in range(plans * (MAX_STEADY_FACTOR if until_steady else MAX_FACTOR)):
        if until_steady and timed and all(steady(timed[i], plans) for i in timed):
            stopped = STEADY
            break
        if not until_steady and r >= plans and (enough is None or enough()):
            stopped = ROUNDS_DONE
            break
        if r > 0 and left() is not None and left() < sum(cost[i] for i in timed):
            stopped = TIME_CAP
            break
        rounds = r + 1
        order = list(timed) if r % 2 == 0 else _alternated(cells, timed)
        for i in order:
            s, w = cells[i]
            m = measure(spark, s.sql(w), execute=False)
            if m.status != "ok":
                w.update(NOT_MEASURED | {"measure_error": m.error})
                timed.pop(i)
                continue
            # Kept at the report's 0.1 ms, so steadiness recomputed from the report agrees.
            timed[i].append(round(m.planning_ms or 0.0, 1))
            _planned(spark, (m.planning_ms or 0.0) / 1000)
            scanned[i] = m.scan.get("manifests_scanned")
            w.update(_summary(timed[i][-kept:] if kept else timed[i], False, scanned[i], s.snapshot_id))
            if kept:
                w["all_plans_ms"] = list(timed[i])
    else:
        if until_steady and timed and all(steady(timed[i], plans) for i in timed):
            stopped = STEADY
    if until_steady:
        for i in timed:
            cells[i][1]["steady"] = steady(timed[i], plans)
    return {"rounds": rounds, "stopped": stopped, "seconds": round(time.perf_counter() - t0, 3)}


# Seconds of planning measured so far in each Spark application (its JVM), warm-ups included.
_PLANNED_S: dict[str, float] = {}


def _planned(spark: SparkSession, seconds: float) -> None:
    app = spark.sparkContext.applicationId
    _PLANNED_S[app] = _PLANNED_S.get(app, 0.0) + seconds


def _warming(
    spark: SparkSession, t0: float, rounds: int, budget_s: float | None, cost: dict[int, float]
) -> bool:
    """Whether to warm up one more round: the session has planned for under WARMUP_S seconds in
    all, under MAX_WARMUPS rounds here, and a round's cost keeps within a quarter of the budget."""
    if rounds >= MAX_WARMUPS or _PLANNED_S.get(spark.sparkContext.applicationId, 0.0) >= WARMUP_S or not cost:
        return False
    return budget_s is None or time.perf_counter() - t0 + sum(cost.values()) <= budget_s / 4


def _alternated(cells: Sequence[tuple[State, dict[str, Any]]], timed: dict[int, list[float]]) -> list[int]:
    """The cells of `timed` with the states in reverse order (windows in order within each state)."""
    labels = list(dict.fromkeys(cells[i][0].label for i in timed))[::-1]
    return [i for label in labels for i in timed if cells[i][0].label == label]


def measure_windows(
    spark: SparkSession,
    source: Source,
    meta: Metadata,
    windows: list[dict[str, Any]],
    plans: int,
    budget_s: float | None = None,
    warmups: int = WARMUPS,
    enough: Callable[[], bool] | None = None,
    until_steady: bool = False,
) -> dict[str, Any]:
    """`measure_states` on one table state, at its current snapshot; how the rounds went."""
    if plans <= 0:
        for w in windows:
            w.update(NOT_MEASURED)
        return {"rounds": 0, "stopped": None, "seconds": 0.0}
    state = state_of(spark, "now", source, meta, windows)
    if state is None:
        return {"rounds": 0, "stopped": None, "seconds": 0.0}
    return measure_states(spark, [state], plans, budget_s, warmups, enough, until_steady)


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
