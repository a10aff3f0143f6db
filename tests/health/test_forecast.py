"""The doctor's planning prediction is the cost model's: fitted on the run `icelab costmodel` fits
on, fed what each window reads now and after the advised rewrite; without a run, no prediction."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icelab.analysis import calibration
from icelab.analysis.calibration import Where
from icelab.analysis.manifest_layouts import AS_INGESTED, predict_table
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE, with_busiest
from icelab.analysis.planning_model import fit_all
from icelab.analysis.planning_runs import load, locate
from icelab.core.config import manifest_health_rules
from icelab.health.advice import advise
from icelab.health.anchor import CALIBRATION
from icelab.health.check import Policy, examine
from icelab.health.console import render_advice
from icelab.health.entry_counts import SUMS
from icelab.health.forecast import NO_FIT, PlanningModel, calibrated, doctor_model, fitted
from icelab.health.reader import Metadata
from icelab.health.source import Source
from icelab.health.spec import Field, Spec

RESULTS = Path(__file__).resolve().parents[2] / "results"
DAY = Field("ts_day", "day", "date", "ts")
FIRST_DAY = 20_454  # 2026-01-01
DAYS, MANIFESTS, PER_DAY = 20, 6, 36  # as ingested: each of 6 appends wrote every day
ENTRY_BYTES = 1_000
WINDOWS = ("1d", "7d", "full")


@pytest.fixture(scope="module")
def model() -> PlanningModel:
    found = fitted([RESULTS])
    assert found is not None, f"no metadata_scale run to fit on under {RESULTS}"
    return found


def ingested() -> Metadata:
    """A day-partitioned table as ingested: 6 manifests of 120 entries, each spanning all 20 days."""
    entries = DAYS * PER_DAY // MANIFESTS
    manifests = pd.DataFrame(
        {
            "path": [f"m{i}.avro" for i in range(MANIFESTS)],
            "length": entries * ENTRY_BYTES,
            "content": 0,
            "spec_id": 0,
            "added_snapshot_id": range(MANIFESTS),
            "entries": entries,
            "deleted_entries": 0,
            "bounds": [((FIRST_DAY, FIRST_DAY + DAYS - 1, False),)] * MANIFESTS,
        }
    )
    partitions = pd.DataFrame(
        {
            "spec_id": 0,
            "key": [(FIRST_DAY + d,) for d in range(DAYS)],
            "label": [f"ts_day={d}" for d in range(DAYS)],
            "exact": MANIFESTS,
            "files": PER_DAY,
            "bytes": PER_DAY * 10**8,
            "records": PER_DAY * 10**6,
        }
        | dict.fromkeys(SUMS[SUMS.index("small_files") :], 0)
    )
    snapshots = pd.DataFrame(columns=["snapshot_id", "committed_us", "operation", "manifest_list"])
    return Metadata({0: Spec(0, (DAY,))}, 0, {}, 2, "/t", None, None, 1, manifests, partitions, snapshots)


def doctor(model: PlanningModel | None, target: int | None = None):
    meta = ingested()
    health = examine(meta, "current", "t", Policy(manifest_health_rules(), WINDOWS), model, now=0)
    return health, advise(health, meta, Source("/t", "hadoop", "cat", "db.t"), model, target)


def reference_only(tmp_path: Path) -> Path:
    """A results directory holding the checkout's reference runs and no runs/: what a clean
    checkout has, whatever a developer's own results/runs holds."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "reference").symlink_to(RESULTS / "reference")
    return tmp_path


def test_the_model_is_the_one_costmodel_fits(tmp_path):
    base = reference_only(tmp_path)
    run = locate(None, base)
    frame, states, windows = load(run)
    expected = fit_all(frame, None, states, windows)[("iceberg", "local")]
    got = fitted([base])
    assert got is not None and got.run == f"metadata_scale/{run.run_id}"
    assert got.threads == int(frame["planner_threads"].iloc[0])
    np.testing.assert_allclose(got.fit.result.params, expected.result.params)


def test_each_window_now_is_predicted_as_costmodel_predicts_the_table_as_ingested(model):
    health, advice = doctor(model)
    files = DAYS * PER_DAY
    table = predict_table(
        files, DAYS, list(WINDOWS), ENTRY_BYTES, model.fit, (), MANIFESTS, threads=model.threads
    )
    expected = table[table["layout"] == AS_INGESTED].set_index("window")
    assert [w["window"] for w in health.windows] == list(WINDOWS)
    for w, p in zip(health.windows, advice.predictions, strict=True):
        assert (w["manifests"], w["entries_read"], w["largest_manifest_entries"]) == (MANIFESTS, files, 120)
        # Nothing measured: the calibration's absolute figure stands in, marked as predicted.
        assert p["now_measured_ms"] is None
        assert p["now_predicted_ms"] == pytest.approx(expected.loc[w["window"], "predicted_ms"], abs=0.05)
        low, high = p["now_predicted_range_ms"]
        assert low < p["now_predicted_ms"] < high
    assert "metadata_scale/" in advice.model and "fitted on run" in advice.model


def test_after_the_rewrite_a_window_is_predicted_from_the_manifests_it_would_read(model):
    # 72 KB manifests of 1 KB entries: 72 entries, two days each, 10 manifests after the rewrite.
    _, advice = doctor(model, target=72_000)
    assert advice.manifests_after == 10
    by = {p["window"]: p for p in advice.predictions}
    reads = {"1d": (1, 72, 36), "7d": (4, 288, 252), "full": (10, 720, 720)}
    for window, (kept, entries, matched) in reads.items():
        expected = model.predictions(
            [
                {
                    "manifests_read": kept,
                    "entries_read": entries,
                    "largest_manifest_entries": 72,
                    "entries_matched": matched,
                    "manifest_bytes_read": entries * ENTRY_BYTES,
                }
            ]
        )[0]
        assert by[window]["after_manifests"] == kept
        assert by[window]["after_predicted_ms"] == expected["ms"], window
        assert by[window]["after_basis"] == CALIBRATION  # nothing measured
    # Fewer manifests and entries read: the narrow windows plan faster after the rewrite.
    for w in ("1d", "7d"):
        assert by[w]["after_predicted_ms"] < by[w]["now_predicted_ms"]


def test_a_newest_run_that_cannot_be_fitted_gives_way_to_an_older_one(tmp_path):
    """A run of one state (the 10M target's: 3 cells of one layout) gives no fit: the doctor fits
    the newest run that gives one instead of predicting nothing."""
    fittable = locate(None, reference_only(tmp_path / "checkout"))
    (one_state,) = sorted((RESULTS / "reference" / "clustered-10m" / "metadata_scale").iterdir())[-1:]
    runs = tmp_path / "runs" / "metadata_scale"
    shutil.copytree(fittable.path, runs / fittable.run_id)
    shutil.copytree(one_state, runs / one_state.name)
    assert one_state.name > fittable.run_id  # the newer of the two
    got = fitted([tmp_path])
    assert got is not None and got.run == f"metadata_scale/{fittable.run_id}"


def test_without_a_run_to_fit_on_there_is_no_prediction(tmp_path):
    assert fitted([tmp_path]) is None
    _, advice = doctor(None, target=72_000)
    assert advice.model.startswith(NO_FIT)
    assert all("now_ms" not in p and "after_ms" not in p for p in advice.predictions)
    lines = render_advice(advice)
    assert sum(NO_FIT in line for line in lines) == 1 and not any(" ms" in line for line in lines)


def test_the_doctor_takes_the_calibration_of_its_engine_and_storage(tmp_path):
    base = reference_only(tmp_path)
    local = Where.of("local", "local")
    model = doctor_model(local, [base])
    assert model is not None and model.run.startswith("calibration/local-local-0ms (run ")
    expected = calibration.iceberg_fit(calibration.matching(local, [base]), ICEBERG_DEFAULT_MODE)
    np.testing.assert_allclose(model.fit.result.params, expected.result.params)
    assert model.path.endswith("local-local-0ms.json") and "busiest_thread_kb" in model.fit.features


def test_without_a_calibration_of_its_store_the_doctor_fits_the_newest_run(tmp_path):
    base = reference_only(tmp_path)
    # The store is calibrated at 0 and +20 ms (docs/costmodel-check-3.md), not at +50 ms.
    assert calibrated(Where.of("local", "object", 20), [base]) is not None
    assert calibrated(Where.of("local", "object", 50), [base]) is None
    model = doctor_model(Where.of("local", "object", 50), [base])
    assert model is not None and model.run == f"metadata_scale/{locate(None, base).run_id}"


def test_windows_of_many_small_manifests_are_predicted_by_their_own_fit(tmp_path):
    """A calibration with the regime's fit: a window of tens of small manifests is predicted by
    it, a one-manifest window by the fit over every cell; without it, every window by the latter;
    a gain between two windows of different regimes is the difference of the two predictions."""
    from tests.analysis.test_calibration import LOCAL, small_manifest_calibration

    base = tmp_path / "results"
    small_manifest_calibration(tmp_path / "run", base / "calibrations")
    model = calibrated(LOCAL, [base])
    assert model is not None and model.small is not None and model.calibration["run_id"]
    reads = pd.DataFrame(
        {
            "manifests_read": [60, 1],
            "entries_read": [3_600, 6_000],
            "largest_manifest_entries": [60, 6_000],
            "entries_matched": [60, 100],
            "manifest_bytes_read": [60 * 9_400, 147_000],
        }
    )
    got = model.predict(reads)
    assert got["small_manifests"].tolist() == [True, False]
    derived = with_busiest(reads, model.threads)
    expected_small = model.small.predict(derived.iloc[[0]])["predicted_ms"].iloc[0]
    expected_full = model.fit.predict(derived.iloc[[1]])["predicted_ms"].iloc[0]
    assert got["predicted_ms"].tolist() == pytest.approx([expected_small, expected_full])
    assert expected_small != pytest.approx(model.fit.predict(derived.iloc[[0]])["predicted_ms"].iloc[0])
    plain = PlanningModel(model.fit, model.run, model.path, model.threads)
    assert not plain.predict(reads)["small_manifests"].any()
    rows = reads.to_dict("records")
    gain = model.gains([rows[0]], [rows[1]])[0]
    assert gain["gain_ms"] == pytest.approx(round(expected_small - expected_full, 1), abs=0.11)
    assert gain["error_ms"] > 0


def test_a_calibration_made_hours_ago_is_flagged_in_the_advice(tmp_path):
    """The doctor says how old its calibration is and, past STALE_AFTER_H, advises calibrating
    again; a model fitted on a run (no calibration) has no age."""
    import datetime as dt

    from icelab.analysis.calibration import STALE_AFTER_H
    from tests.analysis.test_calibration import LOCAL, small_manifest_calibration

    base = tmp_path / "results"
    small_manifest_calibration(tmp_path / "run", base / "calibrations")
    model = calibrated(LOCAL, [base])
    assert model is not None
    made = dt.datetime.fromisoformat(model.calibration["created_utc"])
    fresh, old = made + dt.timedelta(hours=STALE_AFTER_H / 2), made + dt.timedelta(hours=STALE_AFTER_H + 1)
    assert model.age_hours(old) == pytest.approx(STALE_AFTER_H + 1)
    assert model.stale_note(fresh) is None
    note = model.stale_note(old)
    assert note is not None and f"made {STALE_AFTER_H + 1:,.1f} h ago" in note
    assert "icelab costmodel calibrate" in note
    plain = PlanningModel(model.fit, model.run, model.path, model.threads)
    assert plain.age_hours(old) is None and plain.stale_note(old) is None
