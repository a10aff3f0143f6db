"""The driver's own clocks over a measurement (icelab/bench/stalls.py judges what they show):
garbage collection in the driver JVM and a cluster's executors, and how long the driver JVM or
this Python process stood still, each by a sleeper thread that notices its own oversleeps.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

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
# Per driver JVM, keyed by its py4j gateway object itself: Hadoop's monitor. Not by id(gateway):
# once a fresh_jvm run dropped the old gateway, a new one allocated at its address got the dead
# JVM's monitor, and the next measurement failed ("Answer from Java side is empty").
_jvm_pauses: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _cached(gateway: Any, start: Callable[[], Any]) -> Any:
    """The monitor of `gateway`'s JVM, `start()`ed on the first call for that gateway object."""
    if gateway not in _jvm_pauses:
        _jvm_pauses[gateway] = start()
    return _jvm_pauses[gateway]


def _jvm_pause_monitor(spark: SparkSession) -> Any:
    """Hadoop's JvmPauseMonitor in the driver JVM, started once per JVM: a thread that sleeps
    500 ms and adds up its oversleeps beyond 1 s (`getTotalGcExtraSleepTime`, milliseconds)."""
    gateway = spark.sparkContext._gateway

    def start() -> Any:
        monitor = gateway.jvm.org.apache.hadoop.util.JvmPauseMonitor()
        monitor.init(spark.sparkContext._jsc.hadoopConfiguration())
        monitor.start()
        return monitor

    return _cached(gateway, start)


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
