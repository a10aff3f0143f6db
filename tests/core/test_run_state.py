"""The Spark log of a process's runs (icelab/core/run_state.py): each run's spark.log holds its
own lines, and the process's file is emptied once no run is open."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from icelab.core import run_state


@pytest.fixture
def no_run_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's runs are the only ones open in the process (whatever other tests left)."""
    monkeypatch.setattr(run_state, "_open", {})
    monkeypatch.setattr(run_state, "_log_from", {})
    monkeypatch.setattr(run_state, "_final", {})


def run_dir(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.mkdir()
    return path


def test_each_run_of_the_shared_jvm_keeps_its_own_spark_log_and_the_process_log_is_rotated(
    ctx, tmp_path: Path, no_run_open: None
) -> None:
    jvm = ctx.spark._jvm
    # Its own logger at ERROR, whatever the root's level: its lines reach the root's file appender.
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
        "icelab.test", jvm.org.apache.logging.log4j.Level.ERROR
    )
    logger = jvm.org.apache.logging.log4j.LogManager.getLogger("icelab.test")
    marks = [f"marker-{i}-{uuid.uuid4().hex}" for i in (1, 2)]
    runs = [run_dir(tmp_path, "run-1"), run_dir(tmp_path, "run-2")]

    run_state.start(runs[0])
    logger.error(marks[0])
    assert marks[0] in run_state.spark_log.read_text()  # the JVM writes to the process's file
    run_state.finish(runs[0], run_state.COMPLETE)
    after_first = run_state.spark_log.read_bytes()
    run_state.start(runs[1])
    logger.error(marks[1])
    during_second = run_state.spark_log.read_bytes()
    run_state.finish(runs[1], run_state.COMPLETE)

    first, second = ((run / run_state.SPARK_LOG).read_text() for run in runs)
    assert marks[0] in first and marks[1] not in first
    assert marks[1] in second and marks[0] not in second
    # Rotated: the first run's lines left the process's file when it ended, the second's too; the
    # JVM's next line landed at the emptied file's start (append mode), not after a hole of NULs.
    assert marks[0].encode() not in after_first + during_second
    assert marks[1].encode() in during_second and b"\0" not in during_second
    assert marks[1].encode() not in run_state.spark_log.read_bytes()


def test_runs_open_at_once_each_copy_from_their_own_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_run_open: None
) -> None:
    log = tmp_path / "spark.log.process"
    monkeypatch.setattr(run_state, "spark_log", log)

    def write(line: str) -> None:
        with open(log, "a") as f:  # as the JVM does: appending
            f.write(line + "\n")

    outer, inner = run_dir(tmp_path, "outer"), run_dir(tmp_path, "inner")
    write("before")  # the session's start, before any run: the first run's
    run_state.start(outer)
    write("outer")
    run_state.start(inner)
    write("both")
    run_state.finish(inner, run_state.COMPLETE)
    assert log.read_text() == "before\nouter\nboth\n"  # a run still open: not rotated
    write("outer again")
    run_state.finish(outer, run_state.COMPLETE)

    assert (inner / run_state.SPARK_LOG).read_text() == "both\n"
    assert (outer / run_state.SPARK_LOG).read_text() == "before\nouter\nboth\nouter again\n"
    assert log.read_text() == ""
