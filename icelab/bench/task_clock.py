"""How long a measurement's tasks stood still on their executors (icelab/bench/stalls.py judges
it): a stopped executor or a stalled machine holds its tasks off the CPU while the rest of the
stage runs on.

Each measurement's jobs run in a job group of their own. After a measurement whose wall time
could hold a stall (`stalls.STALL_MS` or more), Spark's status store gives each task of its
stages its duration from launch to end, as the driver saw it, and the CPU time it used
(`executorCpuTime`). A task's time off the CPU (reading, waiting, or stopped) beyond the
median of the other tasks of its stage is what the stage does not explain, when it is also
`OUTLIER_RATIO` times that median: tasks that read a store wait on it unevenly, a stopped one
waits many times longer than the rest.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Iterator

from py4j.protocol import Py4JError
from pyspark.sql import SparkSession

from icelab.bench.stalls import OUTLIER_RATIO, STALL_MS

LISTENER_WAIT_MS = 2000  # for the listener bus to record the tasks that just ended
MAX_TASKS = 2000  # per stage: more than any stage of icelab's queries at medium


class TaskClock:
    """Each measurement's tasks, by the job group it ran in."""

    def __init__(self, spark: SparkSession) -> None:
        self._sc = spark.sparkContext
        self._n = 0
        self._group: str | None = None

    @contextlib.contextmanager
    def during(self) -> Iterator[None]:
        """Run the measurement's jobs in a job group of their own."""
        self._n += 1
        self._group = f"icelab-measurement-{self._n}"
        self._sc.setJobGroup(self._group, "icelab measurement")
        try:
            yield
        finally:
            # Unset, so that work between measurements joins no measurement's group; unless the
            # measurement ended the driver JVM (SessionEnded), whose error must reach the caller.
            with contextlib.suppress(Py4JError, ConnectionError):
                self._sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
                self._sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]

    def stall_ms(self, wall_ms: float | None) -> float | None:
        """The longest time a task of the last measurement was off the CPU beyond the median of
        the other tasks of its stage, among tasks off it `OUTLIER_RATIO` times that median, in
        milliseconds (0.0: none); None when the measurement was too short to hold a stall
        (`wall_ms` under `STALL_MS`) or no stage had two tasks."""
        if self._group is None or wall_ms is None or wall_ms < STALL_MS:
            return None
        jsc = self._sc._jsc
        jsc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS)
        tracker, store = jsc.statusTracker(), jsc.sc().statusStore()
        worst: float | None = None
        for job in tracker.getJobIdsForGroup(self._group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds() if info is not None else []:
                found = tracker.getStageInfo(stage)
                if found is None:
                    continue
                off = _off_cpu(store.taskList(stage, found.currentAttemptId(), MAX_TASKS))
                excess = beyond_the_rest(off)
                if excess is not None:
                    worst = excess if worst is None else max(worst, excess)
        return worst


def _off_cpu(tasks: object) -> list[float]:
    """Each task's duration as the driver saw it (launch to end) less its CPU time, in
    milliseconds (ended tasks with metrics only). The driver's clock, not the executor's run
    time: an executor stopped before it started a task it was sent holds that task too."""
    off = []
    found = tasks.iterator()  # type: ignore[attr-defined]
    while found.hasNext():
        task = found.next()
        duration, metrics = task.duration(), task.taskMetrics()
        if duration.isDefined() and metrics.isDefined():
            off.append(float(duration.get()) - metrics.get().executorCpuTime() / 1e6)
    return off


def beyond_the_rest(off_cpu: list[float]) -> float | None:
    """The most a value exceeds the median of the others, among the values at least
    `OUTLIER_RATIO` times that median (0.0: none); None for fewer than two values."""
    if len(off_cpu) < 2:
        return None
    excess = [0.0]
    for i, x in enumerate(off_cpu):
        rest = statistics.median(off_cpu[:i] + off_cpu[i + 1 :])
        if x >= OUTLIER_RATIO * rest:
            excess.append(x - rest)
    return max(excess)
