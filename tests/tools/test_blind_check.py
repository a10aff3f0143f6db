"""`icelab costmodel blind` (icelab.tools.blind_check): the registered calibration is the one the
registration committed, the check is scored and printed with its three figures, and a directory
without held-out runs says that nothing is measured yet (no Spark)."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from icelab.core.provenance import REPO
from icelab.tools import blind_check
from icelab.tools.costmodel import main
from tests.analysis.test_blind_check import LOCAL, catalogue_run, held_run, runs
from tests.analysis.test_calibration import made

FIRST = blind_check.REGISTRATIONS[1]


def first_check(runs_dir: str, foreign: str) -> list[str]:
    """`icelab costmodel blind` of the first registration on these held-out and catalogue runs."""
    return ["blind", "--registration", "1", "--runs", runs_dir, "--foreign", foreign]


@pytest.mark.parametrize("number", sorted(blind_check.REGISTRATIONS))
def test_each_committed_calibration_is_the_one_its_registration_committed(tmp_path, number):
    """The first registration's calibration was moved when the second replaced it: still the
    same bytes as its registering commit holds at its old path."""
    reg = blind_check.REGISTRATIONS[number]
    found = blind_check.registration(REPO / reg.calibration, reg)
    assert found["commit"] and found["as_registered"] and found["page"] == reg.page
    edited = tmp_path / "local-local-0ms.json"
    edited.write_bytes((REPO / reg.calibration).read_bytes() + b" ")
    assert not blind_check.registration(edited, reg)["as_registered"]


def test_the_registrations_are_of_different_commits_calibrations_and_runs():
    regs = [blind_check.REGISTRATIONS[n] for n in (1, 2, 3)]
    assert blind_check.NEWEST == 5
    assert len({(REPO / r.calibration).read_bytes() for r in regs}) == 3
    assert len({r.runs for r in regs}) == 3 and len({r.held_out for r in regs}) == 3
    assert len({r.page for r in regs}) == 3 and regs[0].foreign != regs[1].foreign
    # The third is calibrated on the store at +20 ms, on a ladder of states up to 200,000 entries.
    assert "cal_1m" not in regs[2].ladder and set(regs[2].ladder) < set(regs[1].ladder)


def test_the_check_is_scored_and_printed_with_its_three_figures(tmp_path, capsys):
    runs(tmp_path / "held", ["a", "b", "b"])
    calibration = made(tmp_path, LOCAL)
    none = str(tmp_path / "none")
    args = first_check(str(tmp_path / "held"), none)
    args += ["--calibration", str(calibration)]
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
    assert main(first_check(str(tmp_path), str(tmp_path))) == 0
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
        main(
            [
                "blind",
                "--registration",
                "1",
                "--runs",
                held,
                "--foreign",
                held,
                "--calibration",
                calibration,
                "--json",
                "-",
            ]
        )
        == 0
    )
    found = json.loads(capsys.readouterr().out)
    assert len(found["states"]["runs"]) == 3 and found["foreign"]["runs"] == []


def test_runs_of_a_commit_before_the_registration_are_not_scored(tmp_path, capsys):
    """The registering commit's parent did not hold the registration: its runs were not blind."""
    registered = blind_check.registration(REPO / FIRST.calibration, FIRST)["commit"].split()[0]
    before = blind_check.git(REPO, "rev-parse", f"{registered}^")
    runs(tmp_path / "held", ["a", "b", "b"], commit=before)
    calibration = str(made(tmp_path, LOCAL))
    args = first_check(str(tmp_path / "held"), str(tmp_path / "none"))
    assert main([*args, "--calibration", calibration]) == 0
    printed = capsys.readouterr().out
    assert f"commit {before[:7]} (NOT after the registration" in printed
    assert "cells scored: 0" in printed and "result: not judged yet" in printed


def test_only_the_runs_of_one_commit_are_scored_and_the_others_named(tmp_path, capsys):
    runs(tmp_path / "held", ["a", "b", "b"])
    held_run(tmp_path / "held", "20261129T000000Z-fffff1", "c", seed=3, commit="f" * 40)
    calibration = str(made(tmp_path, LOCAL))
    args = first_check(str(tmp_path / "held"), str(tmp_path / "none"))
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
    args = first_check(str(tmp_path / "none"), str(tmp_path / "foreign"))
    assert main([*args, "--calibration", calibration]) == 0
    said = "the doctor's own predicted now (its model at the time), same 2 cells: within 25% 50.0% (fails)"
    assert said in capsys.readouterr().out
    assert main([*args, "--calibration", calibration, "--json", "-"]) == 0
    doctor = json.loads(capsys.readouterr().out)["foreign"]["doctor"]
    assert doctor["cells"] == 2 and doctor["max_abs_error"] == 0.375 and not doctor["passed"]


def test_a_ladder_registration_predicts_each_run_from_its_own_ladder(tmp_path, capsys, monkeypatch):
    """The second registration's way: each run is fitted on its own ladder states, so two runs on
    a machine 1.6 times slower are predicted as well as the first; the calibration committed
    beforehand (measured at the first machine's speed) misses them all by the same bias. A run
    whose ladder is not the registered states is not scored."""
    root = tmp_path / "held"
    for i, (sitting, slower) in enumerate([("a", 1.0), ("b", 1.6), ("b", 1.6)]):
        run_id = f"2026112{i}T000000Z-abcde{i}"
        held_run(root, run_id, sitting, seed=11 + i, slower=slower, narrow="meta_1m-bbbb")
    other = held_run(root, "20261129T000000Z-abcdef", "b", seed=20, narrow="meta_1m-bbbb")
    table = other.path / blind_check.blind_check.INPUTS_FILE
    table.write_text(table.read_text().replace("meta_200k-aaaa", "meta_200k-zzzz"))
    measurements = pd.read_parquet(other.path / "measurements.parquet")
    measurements["dataset"] = measurements["dataset"].replace("meta_200k-aaaa", "meta_200k-zzzz")
    measurements.to_parquet(other.path / "measurements.parquet", index=False)
    data = json.loads(made(tmp_path, LOCAL).read_text())
    data["provenance"]["states"] = ["meta_1m-bbbb", "meta_200k-aaaa"]
    calibration = tmp_path / "registered.json"
    calibration.write_text(json.dumps(data))
    # Registered by the first page's commit (this checkout's runs come after it).
    ladder = dataclasses.replace(
        blind_check.REGISTRATIONS[2],
        page=FIRST.page,
        ladder=("meta_200k", "meta_1m"),
        held_out="costmodel_check",
    )
    monkeypatch.setitem(blind_check.REGISTRATIONS, 9, ladder)
    args = ["blind", "--registration", "9", "--runs", str(root), "--foreign", str(tmp_path / "none")]
    assert main([*args, "--calibration", str(calibration), "--json", "-"]) == 0
    states = json.loads(capsys.readouterr().out)["states"]
    assert len(states["runs"]) == 3 and "20261129T000000Z-abcdef" not in states["runs"]
    assert {c["dataset"] for c in states["cells"]} == {"meta_10m-cccc"}
    assert states["verdict"]["passed"] and states["verdict"]["cells"] == len(states["cells"])
    # The same runs predicted by the committed calibration alone: biased low, beyond the 10% allowed.
    monkeypatch.setitem(blind_check.REGISTRATIONS, 9, dataclasses.replace(ladder, ladder=()))
    assert main([*args, "--calibration", str(calibration), "--json", "-"]) == 0
    alone = json.loads(capsys.readouterr().out)["states"]["verdict"]
    assert not alone["passed"] and alone["median_signed_error"] < -0.2


def as_registration_9(foreign) -> list[str]:  # noqa: ANN001
    """`icelab costmodel blind` of the registration a test put at number 9, on `foreign` alone."""
    return ["blind", "--registration", "9", "--runs", str(foreign.parent / "none"), "--foreign", str(foreign)]


def test_the_fourth_registration_judges_its_named_tables_with_the_doctors_calibration(
    tmp_path, capsys, monkeypatch
):
    """The fourth registration's way: only the tables it names are judged, the ones it reports
    apart are shown apart, and a run whose doctor predicted with another model than the
    registered calibration is left out (it would not be the doctor a user runs)."""
    calibration = made(tmp_path, LOCAL)
    from icelab.analysis import calibration as calibrations

    coefficients = calibrations.iceberg_fit(calibrations.read(calibration), "local").summary()["coefficients"]
    for i, (sitting, slower) in enumerate([("a", 1.0), ("b", 1.5), ("b", 1.2), ("b", 1.0)]):
        run = catalogue_run(tmp_path / "foreign", f"2026112{i}T000000Z-abcde{i}", sitting, slower)
        data = json.loads((run.path / "catalogue.json").read_text())
        shapes = data["shapes"]
        shapes[1]["now"] = [dict(w, measured_ms=25.0) for w in shapes[0]["now"]]  # unpartitioned
        other = [dict(c, estimate=c["estimate"] * 2) for c in coefficients]
        data["model"] = {"coefficients": other if i == 3 else coefficients}
        (run.path / "catalogue.json").write_text(json.dumps(data))
    fourth = dataclasses.replace(
        blind_check.REGISTRATIONS[4], page=FIRST.page, scored=("fragmented",), reported=("unpartitioned",)
    )
    monkeypatch.setitem(blind_check.REGISTRATIONS, 9, fourth)
    args = as_registration_9(tmp_path / "foreign")
    assert main([*args, "--calibration", str(calibration), "--json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    foreign, reported = result["foreign"], result["reported"]
    assert {c["dataset"] for c in foreign["cells"]} == {"fragmented"}
    assert {c["dataset"] for c in reported["cells"]} == {"unpartitioned"}
    assert len(foreign["runs"]) == 3 and "20261123T000000Z-abcde3" not in foreign["runs"]
    other = [r["run"] for r in foreign["left_out"] if r.get("reason") == blind_check.OTHER_MODEL]
    assert other == ["20261123T000000Z-abcde3"]
    assert main([*args, "--calibration", str(calibration)]) == 0
    printed = capsys.readouterr().out
    assert f"left out, {blind_check.OTHER_MODEL}: 20261123T000000Z-abcde3" in printed
    assert blind_check.REPORTED in printed and "held-out states" not in printed


def test_the_fifth_registration_predicts_each_run_by_the_calibration_of_its_sitting(
    tmp_path, capsys, monkeypatch
):
    """The fifth registration's way: each foreign run is predicted by the calibration its doctor
    used, kept in its run directory; a run whose calibration was made in another sitting is left
    out and named."""
    from icelab.analysis import calibration as calibrations
    from tests.analysis.test_blind_check import HEAD

    data = json.loads(made(tmp_path, LOCAL).read_text())
    data["provenance"]["git"] = {"commit": HEAD, "dirty": False}
    for i, (sitting, slower, made_in) in enumerate(
        [("a", 1.0, "a"), ("b", 1.1, "b"), ("b", 1.2, "b"), ("b", 1.0, "a")]
    ):
        run = catalogue_run(tmp_path / "foreign", f"2026112{i}T000000Z-abcde{i}", sitting, slower)
        own = dict(data, provenance=dict(data["provenance"], sitting=made_in))
        (run.path / "calibration.json").write_text(json.dumps(own))
        fit = calibrations.iceberg_fit(calibrations.read(run.path / "calibration.json"), "local")
        catalogue = json.loads((run.path / "catalogue.json").read_text())
        catalogue["model"] = {"coefficients": fit.summary()["coefficients"]}
        (run.path / "catalogue.json").write_text(json.dumps(catalogue))
    fifth = dataclasses.replace(
        blind_check.REGISTRATIONS[5], page=FIRST.page, scored=("fragmented",), reported=()
    )
    monkeypatch.setitem(blind_check.REGISTRATIONS, 9, fifth)
    args = as_registration_9(tmp_path / "foreign")
    assert main([*args, "--json", "-"]) == 0
    foreign = json.loads(capsys.readouterr().out)["foreign"]
    assert len(foreign["runs"]) == 3 and "20261123T000000Z-abcde3" not in foreign["runs"]
    stale = [r["run"] for r in foreign["left_out"] if r.get("reason") == blind_check.NOT_FRESH]
    assert stale == ["20261123T000000Z-abcde3"]
    cells = pd.DataFrame(foreign["cells"])
    assert cells["predicted_ms"].notna().all() and set(cells["dataset"]) == {"fragmented"}
    assert main(args) == 0
    assert (
        "each run predicted with the calibration its doctor used, made in its sitting"
        in capsys.readouterr().out
    )


def _scored(states: dict | None, foreign: dict | None, doctor: dict | None = None, registered: bool = True):
    """A `score` result whose sets have these verdicts (None: no run measured a cell)."""

    def part(verdict: dict | None, doctor: dict | None = None) -> dict:
        return {"verdict": verdict, "doctor": doctor}

    return {
        "registration": {"as_registered": registered},
        "states": part(states),
        "foreign": part(foreign, doctor),
    }


PASSED = {"cells": 10, "passed": True}
FAILED = {"cells": 10, "passed": False}
NONE_SCORED = {"cells": 0, "passed": False}


def test_the_registered_condition_passes_only_when_every_set_it_judges_passes():
    """A check whose held-out states pass and whose tables other engines wrote fail, where its
    registration judges both (the second's), fails as a whole; a set it does not judge (the
    third's foreign tables) does not count; a set not scored yet leaves it not judged; and
    scored with another calibration than the registered one, it is not judged."""
    second, third, fourth = (blind_check.REGISTRATIONS[n] for n in (2, 3, 4))
    mixed = blind_check.outcome(_scored(PASSED, FAILED), second)
    assert mixed["passed"] is False
    assert [(p["set"], p["held"]) for p in mixed["parts"]] == [("states", True), ("foreign", False)]
    assert blind_check.outcome(_scored(PASSED, PASSED), second)["passed"] is True
    assert blind_check.outcome(_scored(PASSED, None), third)["passed"] is True
    assert blind_check.outcome(_scored(PASSED, NONE_SCORED), second)["passed"] is None
    assert blind_check.outcome(_scored(FAILED, NONE_SCORED), second)["passed"] is False
    assert blind_check.outcome(_scored(PASSED, PASSED, registered=False), second)["passed"] is None
    # The fourth judges the doctor's own prediction too: it must pass as well.
    assert blind_check.outcome(_scored(None, PASSED, FAILED), fourth)["passed"] is False
    assert blind_check.outcome(_scored(None, PASSED, PASSED), fourth)["passed"] is True
    assert blind_check.outcome(_scored(None, PASSED, None), fourth)["passed"] is None


def test_the_second_check_fails_as_registered_though_its_held_out_states_pass(capsys):
    """On its committed runs: the held-out states meet the criterion, the tables other engines
    wrote do not, and its registered condition names both, so the check fails; the command says
    so before any per-set result."""
    assert main(["blind", "--registration", "2"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[1] == (
        "the registered condition as a whole: does not pass "
        "(icelab's held-out states: holds; tables other engines wrote: fails)"
    )
