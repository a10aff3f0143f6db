"""`icelab costmodel blind` (icelab.tools.blind_check): the registered calibration is the one the
registration committed, the check is scored and printed with its three figures, and a directory
without held-out runs says that nothing is measured yet (no Spark)."""

from __future__ import annotations

import json

from icelab.core.provenance import REPO
from icelab.tools import blind_check
from icelab.tools.costmodel import main
from tests.analysis.test_blind_check import LOCAL, catalogue_run, held_run, runs
from tests.analysis.test_calibration import made


def test_the_committed_calibration_is_the_one_the_registration_committed(tmp_path):
    found = blind_check.registration(REPO / blind_check.REGISTERED)
    assert found["commit"] and found["as_registered"]
    edited = tmp_path / "local-local-0ms.json"
    edited.write_bytes((REPO / blind_check.REGISTERED).read_bytes() + b" ")
    assert not blind_check.registration(edited)["as_registered"]


def test_the_check_is_scored_and_printed_with_its_three_figures(tmp_path, capsys):
    runs(tmp_path / "held", ["a", "b", "b"])
    calibration = made(tmp_path, LOCAL)
    none = str(tmp_path / "none")
    args = ["blind", "--runs", str(tmp_path / "held"), "--foreign", none, "--calibration", str(calibration)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "NOT the registered calibration" in printed
    assert "cells scored: " in printed and "not scored (fewer than 3 runs or 2 sittings): 0" in printed
    for line in ("1. within 25%: ", "2. largest error: ", "3. median signed error: ", "coverage of the 95%"):
        assert line in printed
    assert "held-out states (metadata_scale runs):\n" in printed and "result: PASSES" in printed
    assert "per state size (the same figures on its scored cells):\n  200,000 files: " in printed
    said = f"(doctor_catalogue runs): no complete run under {none} measured a cell yet"
    assert printed.rstrip().endswith(said)
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)["states"]
    assert data["verdict"]["passed"] and len(data["runs"]) == 3 and all(c["complete"] for c in data["cells"])
    assert [s["data_files"] for s in data["by_size"]] == [200_000, 1_000_000, 10_000_000]
    assert sum(s["cells"] for s in data["by_size"]) == data["verdict"]["cells"]


def test_without_held_out_runs_nothing_is_measured_yet(tmp_path, capsys):
    assert main(["blind", "--runs", str(tmp_path), "--foreign", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert f"(metadata_scale runs): no complete run under {tmp_path} measured a cell yet" in printed
    assert "NOT the registered" not in printed


def test_a_missing_calibration_is_one_line(tmp_path, capsys):
    assert main(["blind", "--calibration", str(tmp_path / "none.json")]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"icelab: error: {tmp_path / 'none.json'}: no such calibration file"
    )


def test_only_the_held_out_experiments_runs_are_scored_in_a_directory_of_every_run(tmp_path, capsys):
    """results/runs holds every experiment's runs: a metadata_scale run of icelab's own states
    (fitting data, no model inputs) and a smoke run beside the held-out runs are not scored."""
    runs(tmp_path, ["a", "b", "b"])
    for experiment, task in (("metadata_scale", "metadata_scale"), ("smoke", "planning")):
        other = tmp_path / "runs" / experiment / "20261129T000000Z-ffffff"
        other.mkdir(parents=True)
        (other / "run.json").write_text(json.dumps({"status": "complete"}))
        (other / "config.yaml").write_text(f"experiment: {{task: {task}}}\n")
    held = str(tmp_path / "runs")
    calibration = str(made(tmp_path, LOCAL))
    assert (
        main(["blind", "--runs", held, "--foreign", held, "--calibration", calibration, "--json", "-"]) == 0
    )
    found = json.loads(capsys.readouterr().out)
    assert len(found["states"]["runs"]) == 3 and found["foreign"]["runs"] == []


def test_runs_of_a_commit_before_the_registration_are_not_scored(tmp_path, capsys):
    """The registering commit's parent did not hold the registration: its runs were not blind."""
    before = blind_check.git(
        REPO, "rev-parse", f"{blind_check.registration(REPO / blind_check.REGISTERED)['commit'].split()[0]}^"
    )
    runs(tmp_path / "held", ["a", "b", "b"], commit=before)
    calibration = str(made(tmp_path, LOCAL))
    args = ["blind", "--runs", str(tmp_path / "held"), "--foreign", str(tmp_path / "none")]
    assert main([*args, "--calibration", calibration]) == 0
    printed = capsys.readouterr().out
    assert f"commit {before[:7]} (NOT after the registration" in printed
    assert "cells scored: 0" in printed and "result: not judged yet" in printed


def test_only_the_runs_of_one_commit_are_scored_and_the_others_named(tmp_path, capsys):
    runs(tmp_path / "held", ["a", "b", "b"])
    held_run(tmp_path / "held", "20261129T000000Z-fffff1", "c", seed=3, commit="f" * 40)
    calibration = str(made(tmp_path, LOCAL))
    args = ["blind", "--runs", str(tmp_path / "held"), "--foreign", str(tmp_path / "none")]
    assert main([*args, "--calibration", calibration, "--json", "-"]) == 0
    states = json.loads(capsys.readouterr().out)["states"]
    assert len(states["runs"]) == 3 and states["left_out"] == [
        {"run": "20261129T000000Z-fffff1", "commit": "f" * 40}
    ]
    assert states["after_registration"] and states["verdict"]["passed"]
    assert main([*args, "--calibration", calibration]) == 0
    assert "left out, not of commit " in capsys.readouterr().out


def test_the_doctors_own_prediction_of_foreign_tables_is_judged_beside(tmp_path, capsys):
    for i, (sitting, slower) in enumerate([("a", 1.0), ("b", 1.5), ("b", 1.2)]):
        catalogue_run(tmp_path / "foreign", f"2026112{i}T000000Z-abcde{i}", sitting, slower)
    calibration = str(made(tmp_path, LOCAL))
    args = ["blind", "--runs", str(tmp_path / "none"), "--foreign", str(tmp_path / "foreign")]
    assert main([*args, "--calibration", calibration]) == 0
    said = "the doctor's own predicted now (its model at the time), same 2 cells: within 25% 50.0% (fails)"
    assert said in capsys.readouterr().out
    assert main([*args, "--calibration", calibration, "--json", "-"]) == 0
    doctor = json.loads(capsys.readouterr().out)["foreign"]["doctor"]
    assert doctor["cells"] == 2 and doctor["max_abs_error"] == 0.375 and not doctor["passed"]
