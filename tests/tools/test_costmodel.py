"""`icelab costmodel`: the fit, the layouts and the recommendation printed, the holdout checks
printed, and bad input one line (icelab.tools.costmodel; no Spark)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from icelab.analysis.manifest_layouts import recommend
from icelab.tools.costmodel import main
from icelab.tools.costmodel_output import tie_line
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
        (["--files", "1e6", "--days", "180", "--mix", "1d=0.6,30d=0.3"], "the shares sum to 0.9, not 1"),
        (["--files", "1e6", "--days", "180", "--mix", "1d=x"], "bad --mix '1d=x'"),
        (["--files", "1e6", "--days", "180", "--mix", "1d"], "bad --mix '1d'"),
        (["--files", "1e6", "--days", "180", "--mix", "1d=-1,30d=2"], "bad --mix '1d=-1'"),
        (["--files", "1e6", "--days", "180", "--mix", "1d=0.5,1d=0.5"], "window '1d' given twice"),
        (["--files", "1e6", "--days", "180", "--mix", "1d=0.5,3x=0.5"], "bad window '3x'"),
        (
            ["--files", "1e6", "--days", "180", "--windows", "1d,30d", "--mix", "1d=1"],
            "--windows names '30d', which --mix gives no share",
        ),
        (
            ["--files", "1e6", "--days", "180", "--windows", "1d", "--mix", "1d=0.5,7d=0.5"],
            "--mix names '7d', which is not in --windows",
        ),
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


REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"


def _predicted(root: Path, capsys, *extra: str) -> tuple[str, dict]:
    """The text and the JSON of one prediction on the synthetic run under `root`."""
    args = ["--files", "1.8e6", "--days", "180", "--targets", "1MB,8MB", "--results", str(root)]
    args += ["--reference", str(root / "none")]
    assert main([*args, *extra]) == 0
    text = capsys.readouterr().out
    assert main([*args, *extra, "--json", "-"]) == 0
    return text, json.loads(capsys.readouterr().out)


def _recommended(text: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith("recommended: rewrite to "))
    return line.removeprefix("recommended: rewrite to ").split(" ")[0]


def test_targets_within_the_models_error_are_a_tie():
    table = pd.DataFrame(
        {
            "format": "iceberg",
            "layout": ["rewrite_1mb"] * 2 + ["rewrite_8mb"] * 2 + ["rewrite_32mb"] * 2,
            "target_bytes": [2**20] * 2 + [8 * 2**20] * 2 + [32 * 2**20] * 2,
            "manifests": [1203] * 2 + [151] * 2 + [38] * 2,
            "entries_per_manifest": [1497.0] * 2 + [11983.0] * 2 + [47935.0] * 2,
            "window": ["1d", "30d"] * 3,
            "predicted_ms": [100.0, 1900.0, 300.0, 1800.0, 900.0, 2100.0],
        }
    )
    rec = recommend(table, tolerance=0.10)  # 1,000 and 1,050 ms a query: 5% apart; 1,500: 50%
    assert (rec["target"], rec["ties"], rec["per_target"]["1MB"]) == ("1MB", ["8MB"], 1000.0)
    line = tie_line(rec, "10%")
    assert "tie: 1MB and 8MB are a tie within the model's error (10%): pick by maintenance cost" in line
    assert recommend(table, tolerance=0.01)["ties"] == []
    assert "ties not judged" in tie_line(recommend(table, tolerance=None), "")


def test_the_reference_runs_tie_is_said_in_text_and_json(tmp_path, capsys):
    out = tmp_path / "tie.json"
    args = ["--files", "5e6", "--days", "365", "--windows", "1d,30d", "--results", str(REFERENCE)]
    assert main([*args, "--reference", str(REFERENCE), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["recommendation"]["target"] == "4MB" and data["tie"][:2] == ["4MB", "2MB"]
    said = ", ".join(data["tie"][:-1]) + " and " + data["tie"][-1]
    assert f"tie: {said} are a tie within the model's error (median absolute out-of-sample error " in printed
    assert 0 < data["recommendation"]["tolerance"] < 0.5
    assert "coverage of the 95% interval, measured out of sample" in printed
    assert "windows: 1d 50%, 30d 50% (equal weights: no --mix given)" in printed
    assert "entry bytes: 700 (median of the fitted run's states.csv, as ingested)" in printed


def test_a_table_beyond_the_fitted_states_says_so(run_data, tmp_path, capsys):
    write_run(tmp_path / "results", *run_data)
    inside, data = _predicted(tmp_path / "results", capsys, "--windows", "1d")
    assert "outside the fitted range" not in inside and data["outside_fitted_range"] is None
    beyond, data = _predicted(tmp_path / "results", capsys, "--windows", "1d", "--files", "2e7")
    said = "outside the fitted range: 20,000,000 data files (fitted 200,000 to 10,000,000)"
    assert said in beyond and data["outside_fitted_range"].startswith("20,000,000 data files")


def test_the_mix_moves_the_recommendation(run_data, tmp_path, capsys):
    write_run(tmp_path / "results", *run_data)
    short, short_data = _predicted(tmp_path / "results", capsys, "--mix", "1d=0.9,30d=0.1")
    wide, wide_data = _predicted(tmp_path / "results", capsys, "--mix", "1d=0.1,30d=0.9")
    assert (_recommended(short), _recommended(wide)) == ("1MB", "8MB")
    assert "windows: 1d 90%, 30d 10% (the --mix given)" in short
    assert short_data["table"]["windows"] == ["1d", "30d"] and wide_data["table"]["mix"] == {
        "1d": 0.1,
        "30d": 0.9,
    }


def test_json_carries_the_texts_recommendation(run_data, tmp_path, capsys):
    write_run(tmp_path / "results", *run_data)
    text, data = _predicted(tmp_path / "results", capsys, "--windows", "1d,30d")
    rec = data["recommendation"]
    assert _recommended(text) == rec["target"]
    assert f"{rec['manifests']:,} manifests of {rec['entries_per_manifest']:,.0f} entries" in text
    assert data["assumptions"]["threads"] == THREADS and data["coverage"][0]["set"] == "held_out"


def test_help_and_bad_input_load_no_statistics_library():
    """statsmodels and scipy take seconds to import: the command loads them only to fit."""
    code = (
        "import sys; from icelab.tools.main import main; "
        "main(['costmodel', '--files', 'many'])\n"
        "print(sorted(m for m in ('statsmodels', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parents[2]
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
    assert done.stderr.strip().startswith("icelab: error: "), done.stderr
