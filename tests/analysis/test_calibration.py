"""Calibrations (icelab.analysis.calibration): made from a run of states, stored, read back as
the same fit, refused when edited, and found by the engine and storage asked for (no Spark)."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icelab.analysis import calibration
from icelab.analysis.calibration import Where
from icelab.analysis.planning_cells import CALIBRATED_FEATURES, small_manifests
from icelab.analysis.planning_model import fit_all
from icelab.core.runs import Run, read_run
from tests.analysis.test_planning_model import THREADS, synthetic

COMMIT = "1234567890abcdef1234567890abcdef12345678"


def state_run(root: Path, where: Where, run_id: str = "20261128T000000Z-abcdef") -> Run:
    """A synthetic run of states (PLANTED costs) measured on `where`, stored under `root`."""
    frame, states, windows = synthetic()
    run_dir = root / "runs" / "costmodel_calibrate" / run_id
    run_dir.mkdir(parents=True)
    frame.to_parquet(run_dir / "measurements.parquet", index=False)
    states.to_csv(run_dir / "states.csv", index=False)
    windows.to_csv(run_dir / "windows.csv", index=False)
    (run_dir / "run.json").write_text(json.dumps({"status": "complete", "dataset": "tiny-0123456789ab"}))
    env = {
        "machine": {"hostname": "vm", "cpu": "AMD EPYC", "cores": THREADS, "memory_gib": 23.5},
        "versions": {"spark": "3.5.9", "iceberg": "1.10.2"},
        "git": {"commit": COMMIT, "dirty": False},
        "engine": {"name": where.engine, "kind": where.engine, "master": "local[*]"},
        "storage": {"kind": where.storage, "latency_ms": where.latency_ms},
    }
    (run_dir / "env.json").write_text(json.dumps(env))
    found = read_run(run_dir)
    assert found is not None
    return found


@functools.cache
def _made(where: Where) -> str:
    """The calibration of a synthetic run on `where`, as JSON text: made once per test process
    (a fit of the synthetic run takes seconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        return json.dumps(calibration.record(state_run(Path(tmp), where)))


def made(root: Path, where: Where, into: Path | None = None) -> Path:
    """A calibration of a synthetic run on `where`, written under `into` (default root/calibrations)."""
    return calibration.write(json.loads(_made(where)), into or root / "calibrations")


LOCAL = Where.of("local", "local")
STORE_20 = Where.of("local", "object", 20)


def test_a_calibration_read_back_is_the_runs_fit(tmp_path):
    run = state_run(tmp_path, LOCAL)
    path = calibration.write(calibration.record(run), tmp_path / "calibrations")
    assert path.name == "local-local-0ms.json"
    found = calibration.read(path)
    from icelab.analysis.planning_runs import load

    frame, states, windows = load(run)
    # A calibration fits the calibrated form: a cost per KB read beside the cost per entry.
    expected = fit_all(frame, {"iceberg": CALIBRATED_FEATURES}, states=states, windows=windows)
    expected |= calibration.small_manifest_fits(expected, [])
    assert set(found.fits) == set(expected)
    for key, model in expected.items():
        np.testing.assert_allclose(found.fits[key].result.params, model.result.params, rtol=1e-9)
        np.testing.assert_allclose(found.fits[key].result.cov_params(), model.result.cov_params(), rtol=1e-9)
        probe = model.cells.head(3)
        np.testing.assert_allclose(
            found.fits[key].predict(probe)[["predicted_ms", "lo_ms", "hi_ms"]],
            model.predict(probe)[["predicted_ms", "lo_ms", "hi_ms"]],
            rtol=1e-9,
        )
    assert found.where == LOCAL and found.threads == THREADS and found.run_id == run.run_id
    assert found.describe().startswith(f"calibration local/local 0 ms, run {run.run_id}, commit 1234567 (")
    data = json.loads(path.read_text())
    local = next(f for f in data["fits"] if (f["format"], f["mode"]) == ("iceberg", "local"))
    assert local["fitted_range"]["data_files"] == [200_000.0, 10_000_000.0]
    assert local["features"] == list(CALIBRATED_FEATURES) and len(local["covariance"]) == 5
    assert data["provenance"]["machine"]["cores"] == THREADS
    assert set(data["provenance"]["fitted_by"]) == {"commit", "dirty"}
    assert (
        data["provenance"]["git"]["commit"] == COMMIT
        and data["provenance"]["template"] == "tiny-0123456789ab"
    )


def test_an_edited_calibration_is_refused(tmp_path):
    path = made(tmp_path, LOCAL)
    data = json.loads(path.read_text())
    data["fits"][0]["coefficients"]["const"] *= 1.5
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="cells do not give its coefficients"):
        calibration.read(path)


def test_the_calibration_found_is_the_engine_and_storage_asked_for(tmp_path):
    results = tmp_path / "results"
    made(tmp_path, LOCAL, results / calibration.SHIPPED)
    made(tmp_path, STORE_20, results / calibration.SHIPPED)
    found = calibration.matching(LOCAL, [results])
    assert found is not None and found.where == LOCAL
    found = calibration.matching(STORE_20, [results])
    assert found is not None and found.where == STORE_20
    assert calibration.matching(Where.of("local", "object", 0), [results]) is None
    assert calibration.matching(Where.of("standalone", "local"), [results]) is None
    # One made here comes before the committed one.
    mine = made(tmp_path / "mine", LOCAL, results / calibration.MADE)
    found = calibration.matching(LOCAL, [results])
    assert found is not None and found.path == mine


@pytest.mark.parametrize(
    ("made_on", "asked"),
    [
        (Where.of("standalone", "local"), LOCAL),
        (STORE_20, LOCAL),
        (LOCAL, STORE_20),
        (LOCAL, Where.of("standalone", "local")),
        (STORE_20, Where.of("local", "object", 0)),
    ],
)
def test_a_calibration_of_another_engine_or_storage_is_refused(tmp_path, made_on, asked):
    found = calibration.read(made(tmp_path, made_on))
    with pytest.raises(calibration.Mismatch) as refused:
        calibration.check_match(found, asked)
    said = str(refused.value)
    assert f"measured on {made_on}, not on {asked} as asked" in said and "\n" not in said
    calibration.check_match(found, made_on)  # its own engine and storage: taken


def test_local_disk_has_no_added_latency():
    assert Where.of("local", "local", 20) == LOCAL and str(STORE_20) == "local/object 20 ms"
    with pytest.raises(ValueError, match="bad latency"):
        Where.of("local", "object", -1)
    assert (
        Where.of_env({"engine": {"name": "local"}, "storage": {"kind": "object", "latency_ms": 20.0}})
        == STORE_20
    )
    with pytest.raises(ValueError, match="does not say the engine"):
        Where.of_env({"machine": {"cores": 2}})


def test_cells_kept_are_numbers_again(tmp_path):
    found = calibration.read(made(tmp_path, LOCAL))
    cells = found.fits[("iceberg", "local")].cells
    assert pd.api.types.is_float_dtype(cells["data_files"])
    assert not pd.api.types.is_numeric_dtype(cells["dataset"])


def small_manifest_run(root: Path) -> Run:
    """A synthetic run of states whose 200,000-entry state reads manifests of a few KB: the
    cells of the many-small-manifests regime (the synthetic states are otherwise of MBs)."""
    run = state_run(root, LOCAL)
    windows = pd.read_csv(run.path / "windows.csv")
    small = windows["dataset"].str.startswith("meta_200k")
    windows["manifest_bytes_read"] = windows["manifest_bytes_read"].where(
        ~small, windows["manifest_bytes_read"] // 1000
    )
    windows.to_csv(run.path / "windows.csv", index=False)
    return run


def small_manifest_calibration(root: Path, into: Path) -> Path:
    """The calibration of `small_manifest_run`, written under `into`."""
    return calibration.write(calibration.record(small_manifest_run(root)), into)


def test_the_many_small_manifests_fit_is_the_same_form_on_those_cells_alone(tmp_path):
    """A window reading more than one manifest of at most 512 KiB on average is of the regime;
    one manifest, or larger ones, is not; the regime's fit is fitted on exactly its cells, and a
    run without such cells gets none (said in its notes)."""
    reads = pd.DataFrame(
        {
            "manifests_read": [1, 2, 379, 4],
            "manifest_bytes_read": [10_000, 2 * 400_000, 379 * 376_000, 4 * 6_000_000],
        }
    )
    assert small_manifests(reads).tolist() == [False, True, True, False]
    without = json.loads(made(tmp_path, LOCAL).read_text())
    assert not any(f["mode"].endswith("small_manifests") for f in without["fits"])
    assert "iceberg/local/small_manifests not fitted: 0 cells of many small manifests" in without["notes"]
    found = calibration.read(small_manifest_calibration(tmp_path / "run", tmp_path / "calibrations"))
    full, small = found.fits[("iceberg", "local")], calibration.small_manifest_fit(found, "local")
    assert small is not None and small.features == full.features
    regime = full.cells[small_manifests(full.cells)]
    assert 0 < small.n == len(regime) < full.n
    assert set(small.cells["dataset"] + small.cells["layout"]) == set(regime["dataset"] + regime["layout"])
