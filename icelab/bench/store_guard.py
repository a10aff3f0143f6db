"""One bound for every phase that reads the store after the measured rounds: the overhead pairs,
the answers check, anything that lists or reads the tables.

The rounds notice a store that stopped answering after a measurement fails (`StoreWatch`). A
phase after them may instead sit in retries for minutes, its reads failing one by one. So while
such a phase runs, a watcher asks the store every `POLL_S` whether it answers, as the rounds do
(`Store.answers`). When it does not, the store gets the same bounded chance to come back
(`Store.outage`: radosgw restarted once when icelab started it, within `storage.outage_wait_s`).
If it is not back, the phase is stopped: Spark's jobs are cancelled, the JVM thread serving the
phase is interrupted, and whatever the phase registered to stop (a DuckDB query) is interrupted.
The phase then ends with `RunInterrupted`, in one line; no phase retries on its own past the bound.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import failpoints, object_store, run_state
from icelab.core.errors import RunInterrupted

POLL_S = 1.0  # how often the watcher asks the store whether it answers


class Phase:
    """A running phase: what stops it, and whether the store was lost under it."""

    def __init__(self, name: str, store: Any = None) -> None:
        self.name = name
        self.store = store  # object_store.Store, or None on local disk
        self.lost: str | None = None
        self.met: list[dict[str, Any]] = []  # the outages it met (`Store.events`), back or not
        self.said: list[str] = []  # how each came back (`Store.outage`)
        self.note = ""  # what the phase marked across them, said after the line
        self._stoppers: list[Callable[[], None]] = []
        self._asking = threading.Lock()
        self.started_s = time.time()  # wall clock: an outage it meets began no earlier

    def on_stop(self, stop: Callable[[], None]) -> None:
        """Call `stop` (say, a DuckDB connection's `interrupt`) when the phase must end."""
        self._stoppers.append(stop)

    def check(self, failed: bool = False) -> None:
        """Raise `RunInterrupted` when the store was lost: a phase calls it between its reads, and
        with `failed` after a read failed, when the store is asked at once (as the rounds ask it
        after a failed measurement) rather than at the watcher's next look."""
        if self.lost is None and failed:
            self.ask()
        if self.lost is not None:
            raise RunInterrupted(self.lost)

    def ask(self) -> None:
        """Ask the store now; not answering, it gets its bounded chance (`Store.outage`)."""
        if self.store is None or self.lost is not None or self.store.answers():
            return
        # The watcher and the phase's own thread (after a failed read) may both find it gone:
        # one brings it back, the other finds it back.
        with self._asking:
            if self.lost is not None or self.store.answers():
                return
            self._outage()

    def _outage(self) -> None:
        seen = len(self.store.events)
        try:
            self.said.append(self.store.outage(self.name))
        except RunInterrupted as lost:
            self.lost = str(lost)
        finally:
            self.met += self.store.events[seen:]

    def across(self, start_s: float, end_s: float) -> bool:
        """Whether the wall-clock span [start_s, end_s] (epoch seconds) overlaps an outage the
        phase met (`Store.outage_window`)."""
        for event in self.met:
            first, last = self.store.outage_window(event, self.started_s)
            if start_s <= last and end_s >= first:
                return True
        return False

    def tell(self) -> None:
        """Say on the console, one line each, how the outages the phase met ended, with what it
        marked across them (`note`)."""
        for line in self.said:
            print(f"icelab: {line}{self.note}", file=sys.stderr)

    def stop(self) -> None:
        for stop in self._stoppers:
            with contextlib.suppress(Exception):
                stop()


@contextmanager
def bounded(spark: SparkSession, name: str) -> Iterator[Phase]:
    """Run the phase `name` bounded by the store's outage bound; without an object store,
    unbounded (local disk has no outage). On entry it reaches the failpoint `phase.<name>`, spaces
    as underscores (`phase.overhead_pairs`: the tests kill the store there)."""
    store = object_store.active()
    phase = Phase(name, store)
    run_state.doing(name)
    failpoints.point(f"phase.{name.replace(' ', '_')}")
    if store is None:
        yield phase
        return
    worker: Any = spark._jvm.java.lang.Thread.currentThread()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_S):
            phase.ask()  # back within the bound: the phase goes on
            if phase.lost is None:
                continue
            with contextlib.suppress(Exception):
                spark.sparkContext.cancelAllJobs()
            with contextlib.suppress(Exception):
                worker.interrupt()
            phase.stop()
            return

    watcher = threading.Thread(target=watch, name=f"icelab-store-guard-{name}", daemon=True)
    watcher.start()
    try:
        yield phase
    except BaseException as exc:
        done.set()
        watcher.join(timeout=POLL_S + 5)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        phase.ask()  # the phase failed before the watcher looked: the same check, the same bound
        if phase.lost is not None:
            raise RunInterrupted(phase.lost) from None
        raise
    finally:
        done.set()
    watcher.join(timeout=POLL_S + 5)
    # Its reads may all have failed before the watcher looked, each kept as a failure.
    phase.ask()
    phase.tell()
    if phase.lost is not None:
        with contextlib.suppress(Exception):
            spark._jvm.java.lang.Thread.interrupted()  # an interrupt that landed after the work
        raise RunInterrupted(phase.lost)
