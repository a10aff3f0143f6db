"""Named points where the kill tests stop the process with SIGKILL, as a crash would, and
where the timeout tests make a measurement hang.

`ICELAB_KILL_AT=<point>[:<nth>[,<nth>...]][+<seconds>]` kills the process at the nth time
(default the first) it reaches `<point>`, or that many seconds later while it carries on, which
lands the kill inside whatever follows (an Iceberg commit, a Spark write); several specs, `;`
apart, each name a point of their own. Unset, a point costs one
dictionary lookup. Nothing is cleaned up or flushed: that is the point. With `@<program>`
appended, what is killed is not the process but every process below it running `<program>`
(`ICELAB_KILL_AT=protocol.measurement:3@radosgw`: the object store's gateway dies, as a crashed
server would, while the run goes on). `@worker` kills the last Spark worker below it that is
still alive, with its process group (its executor), as a lost machine would take both; with
several nths (`protocol.measurement:2,10@worker`), one worker at each.

`ICELAB_STALL_AT=<point>[:<nth>]+<seconds>[@jvm]` holds the nth arrival at a `stall` point for
that many seconds: in Python, as a py4j call that heeds no interrupt would (it returns early
only when the driver JVM is gone), or with `@jvm` in the JVM thread serving this Python thread
(`Thread.sleep`, which an interrupt ends).

`ICELAB_PAUSE_AT=<point>[:<nth>][+<delay>]@<target>/<seconds>` stops a process with SIGSTOP
for that many seconds, then SIGCONT, `delay` seconds after the nth arrival (so that the pause
lands inside the measurement that follows): `radosgw` (any program below this process), `jvm`
(the driver JVM), `driver` (this Python process, and with it the delay proxy it hosts) or
`executor` (the newest Spark executor below this process, on a standalone cluster icelab
started: one stalled machine of several). A detached shell sends both signals, so a process that
stops itself is resumed: the stalls that nobody's fault plan dealt (icelab/bench/stalls.py).
The targets `jvm-gc` and `executor-gc` are not stopped but made to collect garbage back to back
for that many seconds, a garbage-collection storm: the driver JVM by `System.gc()` through py4j,
the newest executor through its platform MBean (`MemoryMXBean.gc`), over a JMX connection the
driver JVM opens to it with the attach API.

`ICELAB_OOM_AT=<point>[:<nth>]` makes the nth arrival at an `oom` point ask the JVM thread
serving this Python thread for an array larger than any test heap, so the JVM throws a real
`java.lang.OutOfMemoryError: Java heap space` there, as a plan that does not fit would.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

from icelab.core import supervisor
from icelab.core.jvm import jvm_pid, jvm_running

ENV = "ICELAB_KILL_AT"
STALL_ENV = "ICELAB_STALL_AT"
OOM_ENV = "ICELAB_OOM_AT"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"  # a standalone worker's main class
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"  # an executor's
GC_TARGETS = ("jvm-gc", "executor-gc")
_SPEC = re.compile(
    r"(?P<name>[\w.]+)(?::(?P<nth>\d+(?:,\d+)*))?(?:\+(?P<delay>\d+(?:\.\d+)?))?(?:@(?P<program>[\w.-]+))?"
)
_STALL = re.compile(r"(?P<name>[\w.]+)(?::(?P<nth>\d+))?\+(?P<seconds>\d+(?:\.\d+)?)(?P<jvm>@jvm)?")
_OOM = re.compile(r"(?P<name>[\w.]+)(?::(?P<nth>\d+))?")
PAUSE_ENV = "ICELAB_PAUSE_AT"
_PAUSE = re.compile(
    r"(?P<name>[\w.]+)(?::(?P<nth>\d+))?(?:\+(?P<delay>\d+(?:\.\d+)?))?@(?P<target>[\w.-]+)/(?P<seconds>\d+(?:\.\d+)?)"
)
_hits: Counter[str] = Counter()


def _running(program: str) -> list[int]:
    """The processes below this one that run `program`."""
    return [
        pid
        for pid in supervisor.descendants([os.getpid()])
        if (args := supervisor.cmdline(pid)) and os.path.basename(args[0]) == program
    ]


def _newest(main_class: str) -> int | None:
    """The newest process below this one whose command line names `main_class` (a JVM's)."""
    found = [pid for pid in supervisor.descendants([os.getpid()]) if main_class in supervisor.cmdline(pid)]
    return max(found) if found else None


def _kill(program: str | None = None) -> None:
    """SIGKILL this process, or with `program` every process below it that runs it."""
    if program is None:
        os.kill(os.getpid(), signal.SIGKILL)
        return
    if program == "worker":
        worker = _newest(WORKER_CLASS)
        if worker:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker, signal.SIGKILL)  # each worker leads its process group
        return
    for pid in _running(program):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _chosen(env: str, spec: re.Pattern[str], name: str) -> re.Match[str] | None:
    """The environment's spec when this arrival at `name` is the one it picks, else None."""
    given = os.environ.get(env)
    if not given:
        return None
    # Several specs, `;` apart, each for a point of its own (a kill in two phases of one run).
    found = [m for m in map(spec.fullmatch, given.split(";")) if m is not None and m["name"] == name]
    if not found:
        return None
    match = found[0]
    _hits[f"{env}:{name}"] += 1
    chosen = {int(nth) for nth in (match["nth"] or "1").split(",")}
    return match if _hits[f"{env}:{name}"] in chosen else None


def _pids(target: str) -> list[int]:
    """The processes a pause stops: this one, the driver JVM, the newest executor, or those
    below running `target`."""
    if target == "driver":
        return [os.getpid()]
    if target == "jvm":
        pid = jvm_pid()
        return [pid] if pid else []
    if target == "executor":
        executor = _newest(EXECUTOR_CLASS)
        return [executor] if executor else []
    return _running(target)


def _pause(match: re.Match[str]) -> None:
    """Stop the target's processes for the spec's seconds, from a detached shell (or, for a `-gc`
    target, start its storm)."""
    if match["target"] in GC_TARGETS:
        threading.Thread(
            target=_gc_storm,
            args=(match["target"], float(match["delay"] or 0), float(match["seconds"])),
            name="icelab-gc-storm",
            daemon=True,
        ).start()
        return
    pids = " ".join(str(p) for p in _pids(match["target"]))
    if not pids:
        return
    script = f"sleep {match['delay'] or 0}; kill -STOP {pids}; sleep {match['seconds']}; kill -CONT {pids}"
    subprocess.Popen(["sh", "-c", script], start_new_session=True)  # noqa: S603,S607 (fixed program)


def _gc_storm(target: str, delay_s: float, seconds: float) -> None:
    """Make the driver JVM (`jvm-gc`) or the newest executor (`executor-gc`) collect garbage
    back to back for `seconds`, `delay_s` from now."""
    # The session's own module, if a session was started: core imports no pyspark.
    pyspark = sys.modules.get("pyspark")
    sc = pyspark.SparkContext._active_spark_context if pyspark is not None else None
    if sc is None:
        return
    jvm = sc._jvm
    time.sleep(delay_s)
    if target == "jvm-gc":
        collect = jvm.java.lang.System.gc
    else:
        pids = _pids("executor")
        if not pids:
            return
        agent = jvm.com.sun.tools.attach.VirtualMachine.attach(str(pids[0])).startLocalManagementAgent()
        server = jvm.javax.management.remote.JMXConnectorFactory.connect(
            jvm.javax.management.remote.JMXServiceURL(agent)
        ).getMBeanServerConnection()
        memory = jvm.javax.management.ObjectName("java.lang:type=Memory")

        def collect() -> None:
            server.invoke(memory, "gc", None, None)

    end = time.monotonic() + seconds
    with contextlib.suppress(Exception):  # the session may end under the storm
        while time.monotonic() < end:
            collect()


def point(name: str) -> None:
    """Reach the point `name`; dies here (or a little later) when the environment asks for it,
    or starts a pause (`PAUSE_ENV`)."""
    paused = _chosen(PAUSE_ENV, _PAUSE, name)
    if paused is not None:
        _pause(paused)
    match = _chosen(ENV, _SPEC, name)
    if match is None:
        return
    if match["delay"]:
        timer = threading.Timer(float(match["delay"]), _kill, (match["program"],))
        timer.daemon = True
        timer.start()
    else:
        _kill(match["program"])


def stall(name: str, spark: Any) -> None:
    """Reach the stall point `name`; hangs here when the environment asks for it (`STALL_ENV`)."""
    match = _chosen(STALL_ENV, _STALL, name)
    if match is None:
        return
    if match["jvm"]:
        spark._jvm.java.lang.Thread.sleep(int(float(match["seconds"]) * 1000))
        return
    # As a py4j call would, the Python stall returns once the driver JVM is gone.
    end = time.monotonic() + float(match["seconds"])
    while time.monotonic() < end and jvm_running():
        time.sleep(0.05)


def oom(name: str, spark: Any) -> None:
    """Reach the out-of-memory point `name`; the JVM throws OutOfMemoryError here when the
    environment asks for it (`OOM_ENV`): a long[] of 2^31 - 16 elements (16 GiB) fits no test
    heap, and the request fails at once, without filling the heap first."""
    if _chosen(OOM_ENV, _OOM, name) is None:
        return
    jvm = spark._jvm
    jvm.java.lang.reflect.Array.newInstance(jvm.java.lang.Long.TYPE, 2**31 - 16)
