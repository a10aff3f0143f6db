"""`icelab costmodel`: the fit, the layouts and the recommendation printed, the holdout checks
printed, and bad input one line (icelab.tools.costmodel; no Spark)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from icelab.tools.costmodel import main
from icelab.tools.main import main as icelab
from tests.analysis.test_planning_model import PLANTED, THREADS, synthetic


@pytest.fixture(scope="module")
def run_data() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return synthetic()


def write_run(root: Path, frame: pd.DataFrame, states: pd.DataFrame, windows: pd.DataFrame) -> Path:
    run_dir = root / "runs" / "metadata_scale" / "20261124T000000Z-abcdef"
    run_dir.mkdir(parents=True)
    frame.to_parquet(run_dir / "measurements.parquet", index=False)
    states.to_csv(run_dir / "states.csv", index=False)
    windows.to_csv(run_dir / "windows.csv", index=False)
    (run_dir / "run.json").write_text(json.dumps({"status": "complete"}))
    (run_dir / "env.json").write_text(json.dumps({"machine": {"cores": THREADS}}))
    return run_dir


def test_the_command_prints_the_fit_the_layouts_and_the_recommendation(
    run_data, tmp_path, capsys, monkeypatch
):
    run_dir = write_run(tmp_path / "results", *run_data)
    monkeypatch.chdir(tmp_path)  # the default: the newest complete metadata_scale run under results/
    out = tmp_path / "model.json"
    code = main(
        [
            "--files",
            "1.8e6",
            "--days",
            "180",
            "--windows",
            "1d,30d",
            "--targets",
            "1MB,8MB",
            "--json",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    assert f"fitted on results/runs/metadata_scale/{run_dir.name}" in printed
    assert "ms per 1,000 entries" in printed and "ms per partition" in printed
    assert "recommended: rewrite to " in printed and "; as ingested: " in printed
    assert "parquet (listing_serial): 1d " in printed
    data = json.loads(out.read_text())
    assert data["run"]["run_id"] == run_dir.name
    assert {(f["format"], f["mode"]) for f in data["fits"]} == set(PLANTED)
    local = next(f for f in data["fits"] if f["mode"] == "local")
    assert {c["term"] for c in local["coefficients"]} == {
        "const",
        "manifests_read",
        "busiest_thread_entries",
        "entries_matched",
    }
    assert (
        data["table"]["threads"] == THREADS and f"on {THREADS} planning threads (the fitted run's)" in printed
    )
    assert len(data["predictions"]) == 3 * 2 + 2 * 2
    assert data["recommendation"]["layout"] in ("rewrite_1mb", "rewrite_8mb")


def test_the_holdout_command_prints_both_checks(run_data, tmp_path, capsys):
    write_run(tmp_path / "results", *run_data)
    code = main(["--holdout", "--results", str(tmp_path / "results"), "--reference", str(tmp_path / "none")])
    printed = capsys.readouterr().out
    assert code == 0
    assert "held out (more than 1,000,000 data files):" in printed and "meta_10m-cccc" in printed
    assert "real-data reference runs (none found): no cells" in printed
    assert (
        "the same cells in separate runs (0 complete runs under " in printed
        and "no cell measured twice" in printed
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--files", "-3", "--days", "180", "--windows", "1d"], "bad --files '-3'"),
        (["--files", "many", "--days", "180", "--windows", "1d"], "bad --files 'many'"),
        (["--files", "1e6", "--days", "180", "--windows", "1d,3x"], "bad window '3x'"),
        (["--files", "1e6", "--days", "180", "--windows", "1d", "--targets", "8XB"], "bad size '8XB'"),
        (["--files", "1e6", "--days", "180", "--windows", "1d", "--results", "nowhere"], "no run 'nowhere'"),
        (["--files", "1e6", "--days", "180"], "--windows is required"),
        (["--files", "1e6", "--days", "180", "--windows", "1d", "--threads", "1.5"], "bad --threads '1.5'"),
        (["--no-such-option"], "unrecognized arguments"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("icelab: error: ") and message in err


def test_a_run_without_its_cores_is_one_line(run_data, tmp_path, capsys, monkeypatch):
    run_dir = write_run(tmp_path / "results", *run_data)
    (run_dir / "env.json").write_text(json.dumps({"machine": {}}))
    monkeypatch.chdir(tmp_path)
    assert main(["--files", "1e6", "--days", "180", "--windows", "1d"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not say the driver's cores (machine.cores)" in err


def test_no_run_to_fit_on_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert icelab(["costmodel", "--files", "1e6", "--days", "180", "--windows", "1d"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no complete metadata_scale run" in err


def test_python_dash_m_spelling(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "icelab.costmodel", "--files", "0", "--days", "1", "--windows", "1d"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr == "icelab: error: bad --files '0': use a positive number\n"
