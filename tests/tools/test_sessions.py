"""`icelab sessions`: A B A B sessions, each its own `python run.py` process, then compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icelab.tools import sessions
from tests.conftest import FAST_FLAGS, NO_CODEGEN


def test_sessions_alternate_a_and_b():
    assert sessions.schedule(1) == ["a", "b"]
    assert sessions.schedule(3) == ["a", "b", "a", "b", "a", "b"]
    with pytest.raises(ValueError, match="at least 1"):
        sessions.schedule(0)


def test_the_runs_go_where_the_overrides_say():
    assert sessions.results_dir(["experiment=smoke"], Path("results")) == Path("results")
    given = ["paths.results_dir=/tmp/x", "experiment=smoke", "++paths.results_dir=/tmp/y"]
    assert sessions.results_dir(given, Path("results")) == Path("/tmp/y")


def test_a_session_s_run_is_the_one_new_directory(tmp_path: Path):
    old = tmp_path / "runs" / "smoke" / "20260101T000000Z-aaaaaa"
    old.mkdir(parents=True)
    before = sessions.run_paths(tmp_path)
    with pytest.raises(RuntimeError, match="found none"):
        sessions.new_run(before, tmp_path)
    new = tmp_path / "runs" / "smoke" / "20260101T000001Z-bbbbbb"
    new.mkdir()
    assert sessions.new_run(before, tmp_path) == new
    (tmp_path / "runs" / "canonical" / "20260101T000002Z-cccccc").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="expected one new run"):
        sessions.new_run(before, tmp_path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--a", "engine.java_options=-Xss4m", "--b", "x=1"], "give the run's overrides"),
        (["--a", "x=1", "--b", "x=1", "--", "experiment=smoke"], "--a and --b are the same"),
        (["--pairs", "0", "--a", "x=1", "--", "experiment=smoke"], "--pairs must be at least 1"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys):
    assert sessions.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.spark
def test_a_failed_session_stops_the_series_and_is_recorded(tmp_path: Path, capsys):
    """A session that fails (here at once: an unknown experiment) stops the series; the record
    says which side, and how it exited."""
    code = sessions.main(
        ["--a", "protocol.repetitions=2", "--b", "protocol.repetitions=3", "--", "experiment=nope"]
        + [f"paths.results_dir={tmp_path}"]
    )
    assert code == 1
    assert "session 1 (A) exited 2" in capsys.readouterr().err
    (record,) = (tmp_path / "sessions").glob("*.json")
    saved = json.loads(record.read_text())
    assert saved["status"] == "failed"
    assert saved["sessions"] == [{"side": "a", "exit": 2, "seconds": saved["sessions"][0]["seconds"]}]


@pytest.mark.spark
def test_sessions_run_a_then_b_in_new_processes_and_compare(tiny, data_dir: Path, tmp_path: Path, capsys):
    """Two sessions of the planning benchmark on tiny with different driver JVM flags (what a
    multirun cannot do): each wrote its own run with its own flags, in the order A then B, and
    the comparison pooled them."""
    code = sessions.main(
        [
            "--pairs",
            "1",
            "--a",
            f"engine.java_options='-Dicelab.side=a {FAST_FLAGS}'",
            "--b",
            f"engine.java_options='-Dicelab.side=b {FAST_FLAGS}'",
            "--",
            *NO_CODEGEN,
            "engine.driver_memory=2g",
            "experiment=smoke",
            "profile=[as_ingested]",
            "experiment.queries=[count_window]",
            "experiment.windows=[1h,1d]",
            "experiment.ratio=[1d,1h]",
            "protocol.repetitions=2",
            "protocol.executions=0",
            "protocol.overhead_pairs=0",
            "progress=false",
            f"paths.data_dir={data_dir}",
            f"paths.results_dir={tmp_path}",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    (record,) = (tmp_path / "sessions").glob("*.json")
    saved = json.loads(record.read_text())
    assert saved["status"] == "complete" and [s["side"] for s in saved["sessions"]] == ["a", "b"]
    runs = [Path(s["run"]) for s in saved["sessions"]]
    assert runs[0].name < runs[1].name  # A ran first
    confs = [json.loads((r / "env.json").read_text())["spark_conf"] for r in runs]
    flags = [c["spark.driver.extraJavaOptions"] for c in confs]
    assert "-Dicelab.side=a" in flags[0] and "-Dicelab.side=b" in flags[1]
    assert f"b = smoke/{runs[1].name}" in out and "comparison:" in out
