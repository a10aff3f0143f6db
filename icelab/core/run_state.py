"""How a run ends, written down whatever the ending: `run.json`'s status.

Every run directory gets `run.json` with `status: running`, the process id and host the moment
it is created, and the process holds an exclusive lock on the directory's `.lock` file for as
long as the run is open. The run then ends as `complete`, `failed` or `interrupted` (Ctrl-C, or
its object store stopped answering).
A process killed outright (kill -9, out of memory, power) writes nothing, but the kernel drops
its lock; so a run that says `running` while nobody holds its lock is `abandoned`, and the next
run started on the same results directory marks it `interrupted` for good (`reap`). Readers
never mistake a dead run for a live or finished one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import functools
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from icelab.core.errors import RunInterrupted
from icelab.core.results import write_json

RUN_JSON = "run.json"
LOCK = ".lock"
RUNNING, COMPLETE, FAILED = "running", "complete", "failed"
INTERRUPTED, ABANDONED = "interrupted", "abandoned"

# Runs this process opened and has not ended, oldest first, with their lock descriptors.
_open: dict[Path, int] = {}
# What a run adds to run.json when it ends, computed then (`at_finish`).
_final: dict[Path, Callable[[], dict[str, Any]]] = {}

F = TypeVar("F", bound=Callable[..., Any])
# The driver JVM's Spark log (icelab/core/log4j2.properties): one file a process, in this user's
# temporary directory. A run's directory gets its part as spark.log when the run ends, and the
# file is emptied once no run is open (`finish`), so it does not grow run after run.
spark_log = Path(tempfile.gettempdir()) / f"icelab-{os.getuid()}" / f"spark-{os.getpid()}.log"
SPARK_LOG = "spark.log"
# Where each open run's part of spark_log begins, a byte offset (`start`).
_log_from: dict[Path, int] = {}
# What the run is doing now (a measurement, a phase after the rounds), for the line a deadline prints.
_doing = "starting"
DEADLINE_GRACE_S = 30.0  # after the deadline's first SIGINT, a second one this much later


def doing(what: str) -> None:
    """Say what the run is doing now (`protocol.deadline_s` names it when it passes)."""
    global _doing
    _doing = what


class Deadline:
    """`protocol.deadline_s`, the run's last guard: once it passes, Spark's jobs are cancelled and
    the process gets SIGINT, so the protocol stops after the measurement in flight (a phase after
    the rounds at once); `DEADLINE_GRACE_S` later, a second SIGINT aborts. `tracked` then ends the
    run interrupted, every row kept, naming what it was doing."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.line: str | None = None
        self.hooks: list[Callable[[], None]] = []  # what stops the work in flight (Spark's jobs)
        self._done = threading.Event()
        threading.Thread(target=self._run, name="icelab-deadline", daemon=True).start()

    def _run(self) -> None:
        if self._done.wait(self.seconds):
            return
        self.line = f"protocol.deadline_s={self.seconds:g} passed while {_doing}"
        for hook in self.hooks:
            with contextlib.suppress(Exception):
                hook()
        os.kill(os.getpid(), signal.SIGINT)
        if not self._done.wait(DEADLINE_GRACE_S):
            os.kill(os.getpid(), signal.SIGINT)

    def cancel(self) -> None:
        self._done.set()


_deadline: Deadline | None = None


def on_deadline(hook: Callable[[], None]) -> None:
    """Call `hook` when the run's deadline passes (none set: never), before its SIGINT."""
    if _deadline is not None:
        _deadline.hooks.append(hook)


def deadline(seconds: float | None) -> None:
    """Start the run's deadline (None: none); `tracked` cancels it when the run ends."""
    global _deadline
    if _deadline is not None:
        _deadline.cancel()
    _deadline = Deadline(seconds) if seconds else None


def now() -> str:
    """UTC now, to the second, ISO 8601."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def read(run_dir: Path) -> dict[str, Any]:
    """The run's run.json (empty when absent).

    Raises:
        ValueError: when it does not parse (readers list such a run as unreadable).
    """
    try:
        return json.loads((run_dir / RUN_JSON).read_text())
    except FileNotFoundError:
        return {}


def update(run_dir: Path, **fields: Any) -> dict[str, Any]:
    """Merge `fields` into run.json (atomically) and return the result."""
    info = read(run_dir) | fields
    write_json(run_dir / RUN_JSON, info)
    return info


EVENTS = "store_events"  # run.json's list of the store outages a run met (`add_event`)


def add_event(event: dict[str, Any]) -> None:
    """Append `event` to `store_events` in the run.json of every run this process has open, at
    once: a run killed afterwards still says what its store did."""
    for run_dir in list(_open):
        with contextlib.suppress(OSError, ValueError):
            update(run_dir, **{EVENTS: [*read(run_dir).get(EVENTS, []), event]})


_first_run_opened = False


def process_seconds() -> float | None:
    """Seconds since this process started (Python, imports, JVM, session and the work before the
    run directory opened). None where /proc is not there."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            return round(float(uptime.read().split()[0]) - started, 3)
    except (OSError, ValueError, IndexError):
        return None


def start(run_dir: Path, **fields: Any) -> None:
    """Open a run: take its lock and write run.json as running, with who runs it and when its
    process started (a run's duration counts from there: some experiments do their work first)."""
    fd = os.open(run_dir / LOCK, os.O_CREAT | os.O_RDWR, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh directory: nobody else can hold it
    # Its spark.log begins at the log's end; with no other run open, at the log's start: what
    # came since the last run ended (this run's session, its dataset) belongs to no other run.
    _log_from[run_dir] = _log_size() if _open else 0
    _open[run_dir] = fd
    global _first_run_opened
    # Only a process's first run counts from the process's start (a multirun opens several).
    age = None if _first_run_opened else process_seconds()
    _first_run_opened = True
    process_started = (
        (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=age)).isoformat(timespec="seconds")
        if age is not None
        else None
    )
    update(
        run_dir,
        status=RUNNING,
        pid=os.getpid(),
        host=socket.gethostname(),
        started_utc=now(),
        process_started_utc=process_started,
        **fields,
    )


def at_finish(run_dir: Path, fields: Callable[[], dict[str, Any]]) -> None:
    """Have `fields()` merged into run.json when the run ends, however it ends."""
    _final[run_dir] = fields


def _log_size() -> int:
    try:
        return spark_log.stat().st_size
    except OSError:
        return 0


def finish(run_dir: Path, status: str, **fields: Any) -> None:
    """End a run this process opened: final status in run.json, its part of the Spark log in
    spark.log, then release its lock; the last open run ended, the Spark log is emptied."""
    final = _final.pop(run_dir, dict)
    update(run_dir, status=status, finished_utc=now(), **final(), **fields)
    begins = _log_from.pop(run_dir, 0)
    # Spark's errors and stack traces, kept off the console.
    with contextlib.suppress(OSError), open(spark_log, "rb") as log, open(run_dir / SPARK_LOG, "wb") as copy:
        if os.fstat(log.fileno()).st_size >= begins:  # else emptied meanwhile: all of it
            log.seek(begins)
        shutil.copyfileobj(log, copy)
    fd = _open.pop(run_dir, None)
    if fd is not None:
        os.close(fd)  # closing drops the lock
        (run_dir / LOCK).unlink(missing_ok=True)
    if not _open:
        # Every line in it is in some run's spark.log now. The JVM writes in append mode
        # (O_APPEND), so its next line lands at the emptied file's start, leaving no hole.
        with contextlib.suppress(OSError):
            os.truncate(spark_log, 0)


def is_held(run_dir: Path) -> bool:
    """Whether some live process (this one included) holds the run's lock."""
    if run_dir in _open:
        return True
    try:
        fd = os.open(run_dir / LOCK, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also drops the probe's lock when it got it
    return False


def status(run_dir: Path) -> str | None:
    """run.json's status, with `running` read as `abandoned` when its process is gone.

    A run started on another host cannot be probed from here and keeps its `running`.
    """
    info = read(run_dir)
    found = info.get("status")
    if found == RUNNING and info.get("host", socket.gethostname()) == socket.gethostname():
        return RUNNING if is_held(run_dir) else ABANDONED
    return found


def not_complete(status: str | None) -> str:
    """The validators' line for a run that did not end complete."""
    why = {
        "unknown": " (no run.json, and no final file marks it finished)",
        ABANDONED: " (its process is gone, killed?; the next run on these results marks it interrupted)",
    }.get(str(status), "")
    return f"run status is {status!r}, not 'complete'{why}"


def reap(results_dir: Path, salvage: Callable[[Path], Any] | None = None) -> list[Path]:
    """Mark every abandoned run under `results_dir/runs` as interrupted; return them.

    Args:
        results_dir: the results directory.
        salvage: called on each abandoned run before it is marked (the recorder's recovery of
            its rows); a process killed inside it leaves the run abandoned, so the next one
            salvages it again instead of finding it marked with its rows not recovered.
    """
    reaped = []
    for run_json in sorted((results_dir / "runs").glob(f"*/*/{RUN_JSON}")):
        run_dir = run_json.parent
        try:
            abandoned = status(run_dir) == ABANDONED
        except ValueError:
            continue  # unreadable: the validator names it; not ours to rewrite
        if abandoned:
            if salvage is not None:
                salvage(run_dir)
            info = read(run_dir)
            update(
                run_dir,
                status=INTERRUPTED,
                ended=f"process {info.get('pid')} on {info.get('host')} ended without closing the run "
                f"(killed?); marked by process {os.getpid()} at {now()}",
            )
            (run_dir / LOCK).unlink(missing_ok=True)
            reaped.append(run_dir)
    return reaped


# Checks that may find, for a run failing with an exception, a cause outside the run that ends it
# `interrupted` instead (the object store stopped answering); registered by whoever can tell,
# so that this module, which the readers of stored runs import, loads no store and no Spark.
_outside_causes: list[Callable[[BaseException], RunInterrupted | None]] = []


def register_outside_cause(check: Callable[[BaseException], RunInterrupted | None]) -> None:
    """Have every failing run asked `check(exc)`; a `RunInterrupted` it returns ends the run."""
    if check not in _outside_causes:
        _outside_causes.append(check)


def tracked(func: F) -> F:
    """Decorate an experiment's `run(cfg)`: every run it opens ends with a status.

    Returns normally: complete. Ctrl-C: interrupted, one line, exit status 130. `RunInterrupted`
    (its store stopped answering), or any failure while the object store does not answer:
    interrupted, one line, exit status 3. Any other exception: failed, with the error, and the
    exception propagates.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        before = set(_open)

        def end(status: str, **fields: Any) -> list[Path]:
            mine = [d for d in list(_open) if d not in before]
            for run_dir in mine:
                finish(run_dir, status, **fields)
            return mine

        def interrupted(exc: RunInterrupted) -> SystemExit:
            mine = end(INTERRUPTED, ended=str(exc))
            kept = "; ".join(f"{read(d).get('rows', 0)} rows kept in {d}" for d in mine)
            print(f"icelab: {exc}; run interrupted{', ' if kept else ''}{kept}", file=sys.stderr)
            return SystemExit(3)

        global _deadline
        try:
            try:
                result = func(*args, **kwargs)
            except BaseException as exc:
                # Past the deadline, whatever it broke (a cancelled job, its SIGINT) ends the run so.
                if _deadline is not None and _deadline.line is not None and not isinstance(exc, SystemExit):
                    raise RunInterrupted(_deadline.line) from None
                raise
        except KeyboardInterrupt:
            for run_dir in end(INTERRUPTED):
                print(f"icelab: interrupted: what was measured is kept in {run_dir}", file=sys.stderr)
            raise SystemExit(130) from None
        except RunInterrupted as exc:
            raise interrupted(exc) from None
        except BaseException as exc:
            outage = next(filter(None, (cause(exc) for cause in _outside_causes)), None)
            if outage is not None:
                raise interrupted(outage) from None
            end(FAILED, error=repr(exc)[:500])
            raise
        finally:
            if _deadline is not None:
                _deadline.cancel()
                _deadline = None
        end(COMPLETE)
        return result

    return wrapper  # type: ignore[return-value]
