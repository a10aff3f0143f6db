"""The workers of the standalone cluster icelab started, watched around each measurement.

A worker lost while a measurement runs (its process gone, or no longer ALIVE in the master's
`/json/`) costs that measurement its executor: Spark reschedules the lost tasks on the workers
left, and the timing holds the loss and the retry, not only the work. Its row is marked like one
that met a store fault (`faults` names `worker_lost`, `faulted` true), so the rows that count
leave it out of medians. A loss between two measurements is charged to the next one, which the
master may not yet have seen it in. With no worker left the cluster cannot finish: the jobs in
flight, which would wait for an executor forever, are cancelled, and the run ends `interrupted`
(`RunInterrupted`) once the measurement's row is kept.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import cluster, supervisor
from icelab.core.errors import RunInterrupted

POLL_S = 0.2  # how often a measurement's workers are looked at: /proc only, no request to the JVMs


class ClusterWatch:
    """The workers of the cluster this process started (none to watch on any other engine)."""

    def __init__(self) -> None:
        self.cluster = cluster.running()
        self.workers = cluster.workers(self.cluster) if self.cluster is not None else []
        self.alive = {d.role for d in self.workers}

    def _now_alive(self) -> set[str]:
        """Workers whose process runs and whom the master lists ALIVE (by their RPC port)."""
        running = {d.role for d in self.workers if supervisor.alive(d.proc.pid)}
        try:
            assert self.cluster is not None
            listed = {w["port"] for w in self.cluster.status()["workers"] if w["state"] == "ALIVE"}
        except (OSError, ValueError, KeyError):
            return running  # the master did not answer: the processes alone say
        return {d.role for d in self.workers if d.role in running and d.ports.get("port") in listed}

    @contextlib.contextmanager
    def during(self, spark: SparkSession) -> Iterator[None]:
        """While a measurement runs: once no worker process is left, cancel every job (one needing
        an executor would wait for one forever), again each poll until the measurement ends."""
        if not self.workers:
            yield
            return
        done = threading.Event()

        def watch() -> None:
            while not done.wait(POLL_S):
                if not any(supervisor.alive(d.proc.pid) for d in self.workers):
                    with contextlib.suppress(Exception):  # the measurement's own error says the rest
                        spark.sparkContext.cancelAllJobs()

        thread = threading.Thread(target=watch, name="icelab-cluster-watch", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()

    def mark(self, row: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """`row` with the workers lost since the last look named in `faults` and `faulted` set,
        and how many were lost."""
        if not self.workers:
            return row, 0
        now = self._now_alive()
        lost, self.alive = len(self.alive - now), now
        if not lost:
            return row, 0
        faults = ",".join(f for f in (row.get("faults"), f"worker_lost={lost}") if f)
        return {**row, "faults": faults, "faulted": True}, lost

    def said(self, where: str, lost: int) -> str:
        """The line saying a measurement lost workers and the run goes on.

        Raises:
            RunInterrupted: no worker is left, so the cluster cannot finish the run.
        """
        total = len(self.workers)
        what = f"the standalone cluster lost {lost} of its {total} worker(s) during {where}"
        if not self.alive:
            raise RunInterrupted(f"{what}; no worker left to finish the run")
        return f"{what}; {len(self.alive)} left, Spark rescheduled its tasks, the row is marked faulted"
