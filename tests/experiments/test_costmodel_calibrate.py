"""`costmodel_calibrate` on the micro state, in this process's session: it measures Iceberg's
default local planning alone, and stores a calibration that reads back, names this machine,
engine and storage, and fits the run it came from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from icelab.analysis import calibration
from icelab.analysis.calibration import Where
from icelab.analysis.planning_cells import CALIBRATED_FEATURES
from icelab.analysis.planning_model import fit_all
from icelab.analysis.planning_runs import load
from icelab.core.runs import read_run
from tests import jvm_archive

MICRO = [
    "experiment=costmodel_calibrate",
    "meta=[meta_micro]",
    f"experiment.builder_java_options='{jvm_archive.BASE_FLAGS}'",  # C1 only: seconds of work
]


@pytest.mark.spark
def test_calibrate_stores_the_fit_of_this_engine_and_storage(compose_run, ctx, tiny) -> None:  # noqa: ANN001
    from icelab.experiments import costmodel_calibrate

    cfg = compose_run(*MICRO)
    path = costmodel_calibrate.run(cfg)
    assert path == Path(cfg.paths.results_dir) / "calibrations" / "local-local-0ms.json"
    found = calibration.read(path)
    assert found.where == Where.of("local", "local")
    run = read_run(Path(found.provenance["run_path"]))
    assert run is not None and run.experiment == "costmodel_calibrate" and found.run_id == run.run_id
    frame, states, windows = load(run)
    # Iceberg's local planning only, whatever meta_micro's own modes and Parquet side say.
    assert set(frame["format"]) == {"iceberg"} and set(frame["setup"]) == {"local"}
    expected = fit_all(frame, {"iceberg": CALIBRATED_FEATURES}, states=states, windows=windows)
    assert set(found.fits) == set(expected) == {("iceberg", "local")}
    np.testing.assert_allclose(
        found.fits[("iceberg", "local")].result.params, expected[("iceberg", "local")].result.params
    )
    facts = found.provenance
    assert facts["machine"]["cores"] == found.threads and facts["engine"]["name"] == "local"
    assert facts["storage"]["kind"] == "local" and facts["git"]["commit"]
    assert facts["versions"]["iceberg"] and facts["calibrate_s"] > 0
    assert [s.split("-")[0] for s in facts["states"]] == ["meta_micro"] and facts["template"].startswith(
        "tiny-"
    )
