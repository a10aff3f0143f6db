"""A class-data-sharing archive for the tests' JVMs: Spark's and Iceberg's classes, loaded once.

Every driver JVM of the suite (the workers' sessions, each `python run.py` child) loads the same
few thousand Spark, Iceberg and Hadoop classes. Java's AppCDS maps them from an archive instead,
which saves seconds of CPU per JVM on a suite that is CPU-bound. The tests run the same engine
either way: the archive holds class metadata, not behaviour.

The archive is written once per Java, PySpark and Iceberg jar, by a training run (the micro smoke
benchmark) the pytest controller starts in the background; JVMs launched before it is ready run
without it. It is written under a temporary name and renamed when its JVM has exited, because a
JVM given a truncated archive crashes; a missing one is ignored. An archive whose class path is
not a prefix of a JVM's is ignored by that JVM: the S3A jars of storage=object come through
`spark.jars` (Spark's own class loader) so that the store's JVMs keep the archive.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from icelab.core import jvm, supervisor
from tests import local_fs

REPO = Path(__file__).resolve().parents[1]
BASE_FLAGS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# CDS warnings (a class path that differs, a signed jar skipped) go to the JVM's stdout, which
# tests read: off.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# How long the training JVM may take to write the archive as it exits.
DUMP_S = 120
# Another key's archive is another checkout's or an older Java's (180 MB each): kept while it was
# used this recently, so checkouts on one machine do not delete each other's.
KEEP_UNUSED_S = 7 * 24 * 3600


def _key() -> str:
    """What the archive depends on: the JVM, Spark's jars and the Iceberg jar."""
    from icelab.core.preflight import java_executable

    try:
        java = os.path.realpath(java_executable())
        version = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
        packages = [importlib.metadata.version(p) for p in ("pyspark", "snowpark-connect-deps-iceberg")]
    except Exception:  # noqa: BLE001 (no usable Java or Spark: the tests that need them say so)
        return "no-java"
    # sys.prefix: the jars' paths are part of the class path the archive records, and a JVM whose
    # class path differs ignores it, so each virtualenv (each checkout) needs its own archive.
    # The tests' local file system's jar is on every test JVM's class path, the training run's too.
    parts = [java, version, *packages, BASE_FLAGS, sys.prefix, str(local_fs.JAR)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


KEY = _key()
ARCHIVE = Path(tempfile.gettempdir()) / f"icelab-tests-{os.getuid()}" / f"jvm-{KEY}.jsa"
USE_FLAGS = f"-XX:SharedArchiveFile={ARCHIVE} {QUIET}"


def _dumping(path: Path) -> bool:
    """Whether a live process still has `path` as its ArchiveClassesAtExit (it writes at exit)."""
    flag = f"-XX:ArchiveClassesAtExit={path}"
    return any(flag in supervisor.cmdline(p.pid) for p in psutil.process_iter())


def prune(directory: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Delete what no suite will use again: other keys' archives unused for KEEP_UNUSED_S, and
    the partial archives and work directories of training runs whose process is gone (a suite
    killed outright leaves them). Returns what was deleted."""
    now = time.time() if now is None else now
    gone = []
    for path in directory.glob("jvm-*.jsa"):
        if path != keep and now - path.stat().st_mtime > KEEP_UNUSED_S:
            gone.append(path)
    for path in [*directory.glob("jvm-*.*.part"), *directory.glob("train-*")]:
        pid = path.name.split(".")[-2] if path.suffix == ".part" else path.name.removeprefix("train-")
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            gone.append(path)
    for path in gone:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    return gone


class Trainer:
    """The background training run that writes ARCHIVE, if it is missing."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.thread: threading.Thread | None = None
        self.work = ARCHIVE.parent / f"train-{os.getpid()}"
        self.partial = ARCHIVE.with_suffix(f".{os.getpid()}.part")
        # What became of the archive, for the suite's summary: a lost archive costs the suite
        # minutes of CPU and shows nowhere else.
        self.outcome = "present" if ARCHIVE.is_file() else "not started"

    def start(self) -> None:
        """Start the training run unless the archive exists (or Java is missing)."""
        if ARCHIVE.is_file():
            os.utime(ARCHIVE)  # in use: what prune reads as its last use
            return
        if KEY == "no-java":
            return
        from tests.reliability import MICRO

        ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
        prune(ARCHIVE.parent, keep=ARCHIVE)
        overrides = [a for a in MICRO if not a.startswith("engine.java_options=")]
        java = f"engine.java_options='{BASE_FLAGS} -XX:ArchiveClassesAtExit={self.partial} {QUIET}'"
        paths = [f"paths.{d}_dir={self.work / d}" for d in ("data", "results")]
        # The JVM writes the archive as it exits (about 16 s on 2 idle cores, longer beside the
        # suite): run.py's stop_jvm would SIGTERM it after 10 s and SIGKILL it after 20, leaving
        # no archive, so this run gives it the training run's own limit.
        env = {**os.environ, jvm.JVM_EXIT_GRACE_ENV: str(DUMP_S)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(REPO / "run.py"),
                *overrides,
                java,
                *paths,
                f"hydra.run.dir={self.work}/out",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.thread = threading.Thread(target=self._finish, daemon=True)
        self.thread.start()

    def _finish(self) -> None:
        assert self.proc is not None
        started = time.monotonic()
        code = self.proc.wait()
        # run.py waits for its JVM to exit (stop_jvm); should one still be writing, wait for it.
        deadline = time.monotonic() + DUMP_S
        while _dumping(self.partial) and time.monotonic() < deadline:
            time.sleep(0.5)
        if code == 0 and not _dumping(self.partial) and self.partial.is_file():
            self.partial.replace(ARCHIVE)
            self.outcome = f"written in {time.monotonic() - started:.0f} s: {ARCHIVE}"
        else:
            self.outcome = f"NOT written (training run exit {code}, archive file {self.partial.is_file()})"
        self.partial.unlink(missing_ok=True)
        shutil.rmtree(self.work, ignore_errors=True)

    def stop(self) -> None:
        """End the training run if it is still going (the suite is over), and clean up."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.thread is not None:
            self.thread.join(timeout=150)
        if self.outcome == "not started" and self.proc is not None:
            self.outcome = "NOT written (the suite ended first)"
