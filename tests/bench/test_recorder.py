"""Nothing lost when a run stops early: rows on disk as they come, even when the process is killed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icelab.bench.recorder import PARTIAL, recover
from icelab.core import run_state
from icelab.core.contract import MEASUREMENTS, validate

REPO = Path(__file__).resolve().parents[2]

# A child process opens a run, records two rows, writes one line cut short, and is killed.
CHILD = """
import os, signal, sys
from pathlib import Path
from icelab.bench.recorder import Recorder
from icelab.core import run_state

run_dir = Path(sys.argv[1])
run_state.start(run_dir, experiment="t")
rec = Recorder(run_dir, {"run_id": "r", "planned_rows": 3, "protocol": {}})
for window in ("1d", "7d"):
    rec.add({"query_id": "q", "variant": "parquet", "window": window, "repetition": 0,
             "status": "ok", "planning_ms": 1.0})
rec._partial.write('{"query_id": "q", "varia')
rec._partial.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_run_is_marked_interrupted_and_its_rows_recovered(tmp_path):
    run_dir = tmp_path / "runs" / "t" / "20260101T000000Z-abcdef"
    run_dir.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(run_dir)], cwd=REPO)
    assert proc.returncode == -9
    assert len((run_dir / PARTIAL).read_text().splitlines()) == 3  # on disk before any flush
    assert not (run_dir / MEASUREMENTS).exists()  # never flushed: killed inside the first round
    assert run_state.read(run_dir)["status"] == "running"
    assert run_state.status(run_dir) == "abandoned"  # nobody holds its lock any more

    def salvage_cut_short(found: Path) -> None:  # a reaper killed while salvaging the rows
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_state.reap(tmp_path, salvage=salvage_cut_short)
    assert run_state.status(run_dir) == "abandoned"  # not marked: the next reaper salvages it
    recovered = []
    assert run_state.reap(tmp_path, salvage=lambda found: recovered.append(recover(found))) == [run_dir]
    assert recovered == [2]  # the line cut short by the kill is dropped
    info = run_state.read(run_dir)
    assert info["status"] == "interrupted" and "ended without closing the run" in info["ended"]
    assert info["rows"] == 2 and pq.read_table(run_dir / MEASUREMENTS).num_rows == 2
    assert run_state.reap(tmp_path) == []  # marked once

    (run_dir / "env.json").write_text("{}")
    (run_dir / "config.yaml").write_text("")
    problems = " ".join(validate(run_dir))
    assert "run status is 'interrupted'" in problems and "2 rows, but 3 were planned" in problems


def test_a_live_run_is_running_and_is_not_reaped(tmp_path):
    run_dir = tmp_path / "runs" / "t" / "20260101T000000Z-abcdef"
    run_dir.mkdir(parents=True)
    run_state.start(run_dir, experiment="t")
    try:
        assert run_state.status(run_dir) == "running"
        assert run_state.reap(tmp_path) == []
    finally:
        run_state.finish(run_dir, "complete")
    assert run_state.status(run_dir) == "complete" and not (run_dir / ".lock").exists()


def test_tracked_ends_every_run_it_opened(tmp_path):
    dirs = [tmp_path / name for name in ("ok", "boom", "stop")]

    def experiment(run_dir: Path, error: BaseException | None) -> None:
        run_dir.mkdir()
        run_state.start(run_dir)
        if error is not None:
            raise error

    run_state.tracked(experiment)(dirs[0], None)
    with pytest.raises(RuntimeError, match="boom"):
        run_state.tracked(experiment)(dirs[1], RuntimeError("boom"))
    with pytest.raises(SystemExit) as stopped:
        run_state.tracked(experiment)(dirs[2], KeyboardInterrupt())
    assert stopped.value.code == 130
    assert [run_state.status(d) for d in dirs] == ["complete", "failed", "interrupted"]
    assert "boom" in run_state.read(dirs[1])["error"]


class Killed(BaseException):
    """Where a failpoint would SIGKILL the process: the test stops the protocol there instead."""


# The third measured plan of a Parquet cell stands still 3 s in the JVM (no clock of its own
# tells): only the outlier rule, run against its cell, marks it (tests/bench/test_stalls.py).
PLANTED = "measure.plan:3+3@jvm"


@pytest.mark.parametrize(
    ("kill_at", "ruled"),
    [("protocol.retakes", True), ("protocol.measurement:4", False)],
    ids=["during the retake pass", "before the outlier rule ran"],
)
def test_a_run_killed_after_an_outlier_recovers_it_marked(ctx, tiny, tmp_path, monkeypatch, kill_at, ruled):
    from icelab.bench.recorder import RULE, Recorder
    from icelab.core import failpoints
    from tests.bench.test_protocol import protocol
    from tests.bench.test_stalls import _case

    run_dir, left = tmp_path / "run", tmp_path / "left"
    run_dir.mkdir()

    def kill(program: str | None = None) -> None:
        # A SIGKILL leaves the disk as it is now: copy what is there, then stop.
        left.mkdir()
        (left / PARTIAL).write_bytes((run_dir / PARTIAL).read_bytes())
        raise Killed

    failpoints._hits.clear()
    monkeypatch.setenv("ICELAB_STALL_AT", PLANTED)
    monkeypatch.setenv("ICELAB_KILL_AT", kill_at)
    monkeypatch.setattr(failpoints, "_kill", kill)
    rec = Recorder(run_dir, {"run_id": "r", "planned_rows": 4, "protocol": {}})
    with pytest.raises(Killed):
        rec.record(ctx.spark, [_case(tiny, "parquet")], protocol(warmups=0, repetitions=4), {}, False)
    # A run that stops early (Ctrl-C, a lost store) runs the rule on what it kept, before its flush.
    flushed = pq.read_table(run_dir / MEASUREMENTS).to_pylist()
    assert [(r["repetition"], r["faults"]) for r in flushed if r["faulted"]] == [(2, "outlier")]
    lines = [json.loads(line) for line in (left / PARTIAL).read_text().splitlines()]
    rules = [line for line in lines if RULE in line]
    # Killed during the retakes: the rule's marks were on disk before the first retake.
    assert [[key[4] for key in r["marked"]] for r in rules] == ([[2]] if ruled else [])
    assert recover(left) == 4
    rows = pq.read_table(left / MEASUREMENTS).to_pylist()
    assert [(r["repetition"], r["faults"]) for r in rows if r["faulted"]] == [(2, "outlier")]
    assert rows[2]["planning_ms"] >= 3_000
