"""`icelab costmodel` with calibrations: the one of the engine and storage asked for is used and
named, none matching is said, one named for another engine or storage is refused in one line, a
table beyond its fitted range is said, and targets within its error are a tie (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from icelab.analysis import calibration
from icelab.analysis.calibration import Where
from icelab.tools.costmodel import main
from tests.analysis.test_calibration import LOCAL, STORE_20, made
from tests.analysis.test_planning_model import synthetic
from tests.tools.test_costmodel import REFERENCE, write_run

TABLE = ["--files", "1.8e6", "--days", "180", "--windows", "1d,30d", "--targets", "1MB,8MB"]


def predicted(capsys, *args: str) -> tuple[str, dict]:
    """The text and the JSON of one prediction."""
    assert main([*args]) == 0
    text = capsys.readouterr().out
    assert main([*args, "--json", "-"]) == 0
    return text, json.loads(capsys.readouterr().out)


def test_the_calibration_of_the_engine_and_storage_asked_is_used_and_named(tmp_path, capsys, monkeypatch):
    write_run(tmp_path / "results", *synthetic())
    cal = made(tmp_path, LOCAL, tmp_path / "results" / calibration.SHIPPED)
    monkeypatch.chdir(tmp_path)
    text, data = predicted(capsys, *TABLE, "--reference", str(tmp_path / "none"))
    shipped = f"results/reference/calibrations/{cal.name}"
    said = f"calibration local/local 0 ms, run 20261128T000000Z-abcdef, commit 1234567 ({shipped})"
    assert f"costmodel: {said}" in text and f"  calibration: {said}" in text
    assert data["calibration"]["path"] == shipped
    assert data["calibration"]["engine"] == "local" and data["assumptions"]["calibration"] == said
    # Asked about the store at 20 ms, which no calibration here was measured on: said, and the
    # prediction falls back to the newest run of states.
    text, data = predicted(capsys, *TABLE, "--storage", "object", "--latency-ms", "20", "--reference", "none")
    assert "calibration: none matches local/object 20 ms (searched results/calibrations, " in text
    assert "costmodel: fitted on results/runs/metadata_scale/" in text and data["calibration"] is None


@pytest.mark.parametrize(
    ("made_on", "asked"),
    [
        (Where.of("standalone", "local"), []),
        (STORE_20, []),
        (LOCAL, ["--storage", "object", "--latency-ms", "20"]),
        (LOCAL, ["--engine", "standalone"]),
        (STORE_20, ["--storage", "object", "--latency-ms", "0"]),
    ],
)
def test_a_calibration_named_for_another_engine_or_storage_is_refused(tmp_path, capsys, made_on, asked):
    path = made(tmp_path, made_on)
    assert main([*TABLE, "--calibration", str(path), *asked]) == 2
    err = capsys.readouterr().err
    wanted = Where.of(
        asked[asked.index("--engine") + 1] if "--engine" in asked else "local",
        asked[asked.index("--storage") + 1] if "--storage" in asked else "local",
        float(asked[asked.index("--latency-ms") + 1]) if "--latency-ms" in asked else 0,
    )
    assert err.count("\n") == 1 and err.startswith("icelab: error: calibration ")
    assert f"was measured on {made_on}, not on {wanted} as asked" in err


def test_a_table_beyond_the_calibrations_fitted_range_says_so(tmp_path, capsys):
    path = made(tmp_path, LOCAL)
    args = ["--days", "180", "--windows", "1d", "--targets", "1MB,8MB", "--calibration", str(path)]
    args += ["--reference", str(tmp_path / "none")]
    inside, data = predicted(capsys, *args, "--files", "1.8e6")
    assert "outside the fitted range" not in inside and data["outside_fitted_range"] is None
    beyond, data = predicted(capsys, *args, "--files", "2e7")
    said = "outside the fitted range: 20,000,000 data files (fitted 200,000 to 10,000,000)"
    assert said in beyond and data["outside_fitted_range"].startswith("20,000,000 data files (fitted 200,000")
    assert any(p["extrapolated"] for p in data["predictions"])


def test_targets_within_the_calibrations_error_are_a_tie(tmp_path, capsys):
    # The medium reference runs (local engine, local disk) were never fitted: the calibration's
    # median error on them is the tolerance (19% for this synthetic calibration). On this table
    # 2MB and 8MB manifests plan about 7% apart, 32MB about 47% slower than 2MB.
    path = made(tmp_path, LOCAL)
    args = ["--files", "1e6", "--days", "180", "--windows", "1d,30d", "--targets", "2MB,8MB,32MB"]
    text, data = predicted(capsys, *args, "--calibration", str(path), "--reference", str(REFERENCE))
    rec = data["recommendation"]
    assert "coverage of the 95% interval, measured out of sample (the calibration's fit)" in text
    per, tolerance = rec["per_target"], rec["tolerance"]
    assert tolerance > 0 and data["tie"] == ["2MB", "8MB"]
    assert per["8MB"] <= per["2MB"] * (1 + tolerance) < per["32MB"]
    said = "tie: 2MB and 8MB are a tie within the model's error (median absolute out-of-sample error "
    assert said in text


def test_calibration_and_results_together_are_one_line(tmp_path, capsys):
    path = made(tmp_path, LOCAL)
    assert main([*TABLE, "--calibration", str(path), "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give --calibration or --results, not both" in err


def test_an_unreadable_calibration_is_one_line(tmp_path, capsys):
    path = tmp_path / "local-local-0ms.json"
    path.write_text("{}")
    assert main([*TABLE, "--calibration", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a calibration icelab can read" in err


def test_a_calibration_from_a_stored_run(tmp_path, capsys):
    from tests.analysis.test_calibration import state_run

    run = state_run(tmp_path, STORE_20)
    into = tmp_path / "cals"
    assert main(["calibrate", "--from", str(run.path), "--into", str(into)]) == 0
    assert "calibration local/object 20 ms, run 20261128T000000Z-abcdef" in capsys.readouterr().out
    assert calibration.read(into / "local-object-20ms.json").where == STORE_20
    assert main(["calibrate", "--from", str(tmp_path / "nowhere")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert calibration.read(into / "local-object-20ms.json").provenance["calibrate_s"] is None


def test_a_refit_keeps_the_time_the_run_took_to_calibrate(tmp_path, capsys):
    """The calibration the run made itself, beside it (<results>/calibrations/), says how long
    calibrating took; a refit of the run (`--from`) keeps it, and a refit of another run does not."""
    from tests.analysis.test_calibration import state_run

    run = state_run(tmp_path, STORE_20)
    made = calibration.record(run, wall_s=371.5)
    calibration.write(made, tmp_path / calibration.MADE)
    into = tmp_path / "refit"
    assert main(["calibrate", "--from", str(run.path), "--into", str(into)]) == 0
    assert calibration.read(into / "local-object-20ms.json").provenance["calibrate_s"] == 371.5
    other = state_run(tmp_path, STORE_20, run_id="20261128T000001Z-abcdef")
    assert main(["calibrate", "--from", str(other.path), "--into", str(into)]) == 0
    assert calibration.read(into / "local-object-20ms.json").provenance["calibrate_s"] is None


def test_the_calibrate_command_line_names_engine_and_storage(tmp_path):
    from icelab.tools.calibrate import command, parser

    line = command(parser().parse_args(["--storage", "object", "--latency-ms", "20", "meta=[meta_micro]"]))
    # On the store, the store's ladder (conf/experiment/costmodel_calibrate_store.yaml).
    assert line[2:] == [
        "experiment=costmodel_calibrate_store",
        "engine=local",
        "storage=object",
        "storage.latency_ms=20",
        "meta=[meta_micro]",
    ]
    assert Path(line[1]).name == "run.py"
    assert command(parser().parse_args([]))[2:4] == ["experiment=costmodel_calibrate", "engine=local"]


def test_windows_of_many_small_manifests_are_predicted_as_the_doctor_predicts_them(tmp_path, capsys):
    """With a calibration that has the fit on many small manifests, `icelab costmodel` predicts
    the windows of that regime by it, as the doctor does: the same windows' reads through the
    doctor's model give the same milliseconds and the same choice of fit; the text marks them."""
    from icelab.health.forecast import READS, PlanningModel
    from tests.analysis.test_calibration import small_manifest_calibration

    path = small_manifest_calibration(tmp_path / "run", tmp_path / "calibrations")
    table = ["--files", "36000", "--days", "180", "--windows", "1d,30d", "--targets", "256KB,8MB"]
    text, data = predicted(capsys, *table, "--calibration", str(path), "--reference", str(tmp_path / "none"))
    rows = pd.DataFrame([r for r in data["predictions"] if r["format"] == "iceberg"])
    assert set(rows["fit"]) == {"all", "small_manifests"}
    doctor = PlanningModel.of_calibration(calibration.read(path)).predict(rows[list(READS)])
    assert rows["predicted_ms"].tolist() == pytest.approx(doctor["predicted_ms"].tolist())
    assert (rows["fit"] == "small_manifests").tolist() == doctor["small_manifests"].tolist()
    assert "s: by the fit on many small manifests" in text
    assert data["assumptions"]["small_manifests_fit"].endswith("it predicts the windows of that regime")


def test_a_calibration_made_hours_ago_is_said_with_advice_to_calibrate_again(tmp_path, capsys):
    """Past STALE_AFTER_H the prediction's notes say how old its calibration is and to calibrate
    again; a fresh one says nothing of the kind."""
    import datetime as dt

    path = made(tmp_path, LOCAL)
    text, _ = predicted(capsys, *TABLE, "--calibration", str(path), "--reference", str(tmp_path / "none"))
    assert "h ago" not in text
    data = json.loads(path.read_text())
    then = dt.datetime.now(dt.UTC) - dt.timedelta(hours=calibration.STALE_AFTER_H + 2)
    data["provenance"]["created_utc"] = then.isoformat(timespec="seconds")
    path.write_text(json.dumps(data))
    text, _ = predicted(capsys, *TABLE, "--calibration", str(path), "--reference", str(tmp_path / "none"))
    assert (
        f"note: the calibration predicting planning here was made {calibration.STALE_AFTER_H + 2:,.1f} h ago"
        in text
    )


def test_absolute_figures_are_said_with_the_calibrations_time_sitting_and_machine(tmp_path, capsys):
    """For a table the user does not have yet, the predicted ms are absolute: the line right
    under them names the calibration, when it was made, its sitting (its label, else its run's
    UTC date) and the machine it was measured on; the JSON keeps the same."""
    from tests.analysis.test_planning_model import THREADS

    path = made(tmp_path, LOCAL)
    data = json.loads(path.read_text())
    data["provenance"] |= {"created_utc": "2026-11-29T11:33:48+00:00", "sitting": "2026-11-29a"}
    path.write_text(json.dumps(data))
    args = [*TABLE, "--calibration", str(path), "--reference", str(tmp_path / "none")]
    text, found = predicted(capsys, *args)
    lines = text.splitlines()
    under = lines[next(i for i, line in enumerate(lines) if line.startswith("  ms: predicted planning")) + 1]
    assert under.startswith(
        "  ms are absolute, from calibration local/local 0 ms made 2026-11-29T11:33 UTC in sitting "
        f"2026-11-29a on AMD EPYC, {THREADS} cores, 23.5 GiB (host vm): "
    )
    assert found["origin"] == {
        "fitted": "calibration local/local 0 ms",
        "made": "made",
        "made_utc": "2026-11-29T11:33:48+00:00",
        "sitting": "2026-11-29a",
        "labelled": True,
        "machine": {"hostname": "vm", "cpu": "AMD EPYC", "cores": THREADS, "memory_gib": 23.5},
    }
    del data["provenance"]["sitting"]
    path.write_text(json.dumps(data))
    text, found = predicted(capsys, *args)
    assert "in sitting 20261128 (its run's UTC date: no sitting label) on AMD EPYC" in text
    assert found["origin"]["sitting"] == "20261128" and not found["origin"]["labelled"]
