"""The driver JVM PySpark launches for this process: whether it runs, its pid, and ending it
for sure (a JVM that no longer answers included), without a call through py4j."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

# From closing the driver JVM's stdin (PySpark's signal to exit) to SIGTERM, and on to SIGKILL.
JVM_EXIT_GRACE_S = 10.0
# A JVM that writes something as it exits needs longer: a class-data archive
# (-XX:ArchiveClassesAtExit, about 16 s on 2 idle cores here) or a flight recording.
JVM_EXIT_GRACE_ENV = "ICELAB_JVM_EXIT_GRACE_S"


def exit_grace_s() -> float:
    """The driver JVM's grace at exit: `ICELAB_JVM_EXIT_GRACE_S` seconds if set, else 10."""
    raw = os.environ.get(JVM_EXIT_GRACE_ENV, "")
    try:
        return float(raw) if raw else JVM_EXIT_GRACE_S
    except ValueError:
        print(
            f"icelab: {JVM_EXIT_GRACE_ENV}={raw!r} is not a number; using {JVM_EXIT_GRACE_S:g}",
            file=sys.stderr,
        )
        return JVM_EXIT_GRACE_S


def jvm_running() -> bool:
    """Whether this process has a driver JVM it can call (false once `stop_jvm` has ended it)."""
    return SparkContext._gateway is not None


def jvm_pid() -> int | None:
    """The process id of the driver JVM PySpark launched for this process, if any."""
    return getattr(getattr(SparkContext._gateway, "proc", None), "pid", None)


def forget_jvm() -> None:
    """Drop PySpark's references to the driver JVM (`stop_jvm` ends it), so `get_session` launches anew.

    PySpark keeps the gateway, the context and the session in class attributes, and would hand
    out the dead session again.
    """
    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None


def stop_jvm(grace_s: float | None = None) -> int | None:
    """Make sure the driver JVM PySpark launched for this process is gone before Python exits.

    PySpark's JVM exits when its stdin closes; one stuck in full GC did not, and outlived the run
    (docs/metadata-scale.md). So: close its stdin, then SIGTERM, then SIGKILL, `grace_s` apart.
    No call goes through py4j, which an unresponsive JVM would never answer. `grace_s` None:
    `exit_grace_s()`.

    Returns:
        The JVM's exit status (negative: the signal that ended it), None when this process
        launched none.
    """
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None:
        return None
    forget_jvm()
    # py4j's finalizers would tell the gone JVM about every Python-side object at interpreter
    # exit, and log each failure with a traceback after the run's last line: disconnected here.
    client = getattr(gateway, "_gateway_client", None)
    if client is not None:
        client.is_connected = False
    grace_s = exit_grace_s() if grace_s is None else grace_s
    steps = (lambda: proc.stdin and proc.stdin.close(), proc.terminate, proc.kill)
    for step in steps:
        with contextlib.suppress(OSError):  # stdin already broken, or the process just exited
            step()
        try:
            return proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()
