"""Stalls nobody injected: a row whose wall time its own work does not explain is marked.

Each measurement records what it can about its own health (`JvmClock`, and on S3A the store's
request durations, `storage.RequestCounts`): the JVM's garbage-collection time over the
measurement (`gc_ms`), the time S3A's requests took (`s3_request_ms`, summed) and the longest
one when it set a new longest for the session (`s3_longest_ms`). Iceberg's own planning clock is
already in the row (`iceberg_planning_ms`). The rules, also in docs/protocol.md:

- `stall=<s>`: the planning's wall time exceeds Iceberg's own planning clock by `STALL_MS` or
  more (the process stood still while Iceberg did not count); or a store request took
  `STALL_MS` or more (the longest, or the mean of the measurement's requests); or the driver JVM
  or this Python process stood still `STALL_MS` or more (`pause_ms`: a sleeper thread in each
  that oversleeps, Hadoop's JvmPauseMonitor in the JVM).
- `gc=<s>`: the JVM collected garbage for `GC_MS` or more, and for at least `GC_SHARE` of the
  measurement's wall time.
- `outlier`: against the rest of its cell (same dataset, query, variant and window, measured
  rounds, ok and unmarked), a planning or execution time at least `OUTLIER_RATIO` times the
  median of the others and `OUTLIER_MS` above it, with at least `OUTLIER_OTHERS` other.

A marked row is left out of the medians like any faulted row, and the protocol measures that
repetition again once (`retake` 1), so that the cell keeps its n.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pyspark.sql import SparkSession

STALL_MS = 2000.0  # unexplained wall time, or one store request, that marks a stall
GC_MS = 1000.0  # garbage collection that marks a row, when it is also ...
GC_SHARE = 0.5  # ... at least this share of the measurement's wall time
OUTLIER_RATIO = 3.0  # a time this many times the median of the rest of its cell ...
OUTLIER_MS = 1000.0  # ... and this far above it is an outlier
OUTLIER_OTHERS = 1  # rows of the cell besides it, at least (the smoke run measures two rounds)
REASONS = ("stall", "gc", "outlier")
CELL = ("dataset", "query_id", "variant", "window")


PAUSE_POLL_S = 0.05  # the Python sleeper's nap: an oversleep beyond it ...
PAUSE_MIN_S = 0.5  # ... by this much is a pause of this process


class _PythonPauses:
    """A thread that naps `PAUSE_POLL_S` and adds up its oversleeps of `PAUSE_MIN_S` or more: the
    time this Python process stood still (stopped, swapped out, starved), as Hadoop's
    JvmPauseMonitor does for a JVM."""

    def __init__(self) -> None:
        self.total_s = 0.0
        threading.Thread(target=self._run, name="icelab-pause-monitor", daemon=True).start()

    def _run(self) -> None:
        while True:
            t0 = time.monotonic()
            time.sleep(PAUSE_POLL_S)
            extra = time.monotonic() - t0 - PAUSE_POLL_S
            if extra >= PAUSE_MIN_S:
                self.total_s += extra


_python_pauses: _PythonPauses | None = None
_jvm_pauses: dict[int, Any] = {}  # per driver JVM (its py4j gateway's id): Hadoop's monitor


def _jvm_pause_monitor(spark: SparkSession) -> Any:
    """Hadoop's JvmPauseMonitor in the driver JVM, started once per JVM: a thread that sleeps
    500 ms and adds up its oversleeps beyond 1 s (`getTotalGcExtraSleepTime`, milliseconds)."""
    gateway = spark.sparkContext._gateway
    key = id(gateway)
    if key not in _jvm_pauses:
        monitor = gateway.jvm.org.apache.hadoop.util.JvmPauseMonitor()
        monitor.init(spark.sparkContext._jsc.hadoopConfiguration())
        monitor.start()
        _jvm_pauses[key] = monitor
    return _jvm_pauses[key]


class JvmClock:
    """Garbage-collection time so far: the driver JVM's, over every collector, and on a cluster
    the executors' (Spark's status store sums their tasks' GC time as the tasks end, so a
    collection late in a task may count in the next measurement)."""

    def __init__(self, spark: SparkSession) -> None:
        factory = spark.sparkContext._jvm.java.lang.management.ManagementFactory
        self._beans = list(factory.getGarbageCollectorMXBeans())
        self._store = spark.sparkContext._jsc.sc().statusStore()
        self._jvm_pauses = _jvm_pause_monitor(spark)
        global _python_pauses
        if _python_pauses is None:
            _python_pauses = _PythonPauses()
        self._python_pauses = _python_pauses

    def pause_ms(self) -> float:
        """The time the driver JVM and this Python process stood still so far (their sleepers'
        oversleeps), in milliseconds."""
        return float(self._jvm_pauses.getTotalGcExtraSleepTime()) + self._python_pauses.total_s * 1000

    def gc_ms(self) -> int:
        own = sum(max(0, int(b.getCollectionTime())) for b in self._beans)
        executors = 0
        found = self._store.executorList(True).iterator()
        while found.hasNext():
            e = found.next()
            # In local mode the one executor is the driver, whose JVM the beans already count.
            if str(e.id()) != "driver":
                executors += int(e.totalGCTime())
        return own + executors


def row_marks(row: dict[str, Any]) -> list[str]:
    """The marks a row earns from its own clocks (`stall=<s>`, `gc=<s>`); empty for a clean one."""
    marks = []
    stalled = []
    wall, inner = row.get("planning_ms"), row.get("iceberg_planning_ms")
    if wall is not None and inner is not None and wall - inner >= STALL_MS:
        stalled.append(wall - inner)
    longest = row.get("s3_longest_ms")
    if longest is not None and longest >= STALL_MS:
        stalled.append(longest)
    spent, sent = row.get("s3_request_ms"), row.get("s3_requests")
    if spent and sent and spent / sent >= STALL_MS:
        stalled.append(spent / sent)
    paused = row.get("pause_ms")
    if paused is not None and paused >= STALL_MS:
        stalled.append(paused)
    if stalled:
        marks.append(f"stall={max(stalled) / 1000:.1f}")
    gc = row.get("gc_ms")
    total = row.get("total_ms") or row.get("planning_ms")
    if gc is not None and total and gc >= GC_MS and gc >= GC_SHARE * total:
        marks.append(f"gc={gc / 1000:.1f}")
    return marks


def outliers(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that are outliers against the rest of their cell (measured, ok, unmarked rows)."""
    cells: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if not row.get("warmup") and row.get("status") == "ok" and not row.get("faulted"):
            cells[tuple(row.get(k) for k in CELL)].append(row)
    found = []
    for members in cells.values():
        for metric in ("planning_ms", "execution_ms"):
            timed = [r for r in members if r.get(metric) is not None]
            for row in timed:
                others = [r[metric] for r in timed if r is not row]
                if len(others) < OUTLIER_OTHERS:
                    continue
                middle = statistics.median(others)
                x = row[metric]
                if x >= OUTLIER_RATIO * middle and x - middle >= OUTLIER_MS and row not in found:
                    found.append(row)
    return found


def mark(row: dict[str, Any], marks: list[str]) -> dict[str, Any]:
    """`row` with `marks` added to its faults, and faulted (in place; returned)."""
    if marks:
        row["faults"] = ",".join([*([row["faults"]] if row.get("faults") else []), *marks])
        row["faulted"] = True
    return row


# A clock's mark gives seconds with one decimal (`stall=20.5`); the delay proxy's tally, which
# also names a `stall`, counts requests (`stall=2`, icelab/core/object_store/proxy.py).
_MARK = re.compile(r"(stall|gc)=\d+\.\d|outlier")


def reasons(row: dict[str, Any]) -> list[str]:
    """Which of `REASONS` a row was marked for (by its clocks, not by the proxy's tally)."""
    found = {
        m.group(1) or m.group(0) for m in map(_MARK.fullmatch, str(row.get("faults") or "").split(",")) if m
    }
    return [r for r in REASONS if r in found]


def counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Rows marked per reason (a row marked for two counts under both)."""
    found = dict.fromkeys(REASONS, 0)
    for row in rows:
        for r in reasons(row):
            found[r] += 1
    return found


def counts_text(found: dict[str, int], retaken: int | None = None) -> str:
    """`marked: 1 stall, 0 gc, 0 outlier (left out of medians); 1 measured again`."""
    text = "marked: " + ", ".join(f"{n} {r}" for r, n in found.items())
    if any(found.values()):
        text += " (left out of medians)"
    if retaken is not None:
        text += f"; {retaken} measured again"
    return text
