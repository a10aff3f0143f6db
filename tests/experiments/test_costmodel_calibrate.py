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


def test_the_store_ladder_is_the_local_one_less_its_1m_rung_on_the_bucket(compose_cfg) -> None:  # noqa: ANN001
    """costmodel_calibrate_store: the local ladder's states (the same configs, so the same hashes)
    less cal_1m, left out by a null (which the config loader drops), on the store, built under
    the local data directory it names."""
    from icelab.core.config.base import as_dict

    local = as_dict(compose_cfg("experiment=costmodel_calibrate"), "meta")
    cfg = compose_cfg("experiment=costmodel_calibrate_store")
    store = {name: size for name, size in as_dict(cfg, "meta").items() if size is not None}
    assert set(store) == set(local) - {"cal_1m"} and cfg.meta.cal_1m is None
    build_keys = ("data_files", "manifests", "days", "rewrites", "partitioning", "schema")
    for name, size in store.items():
        assert [size[k] for k in build_keys] == [local[name][k] for k in build_keys]
    assert cfg.storage.kind == "object" and cfg.paths.data_dir.startswith("s3a://")
    assert cfg.paths.copy_from == "data" and list(cfg.experiment.windows) == ["1d", "30d", "180d"]


def test_the_third_checks_ladder_is_the_store_calibrations_and_its_held_out_sizes_are_new(
    compose_cfg,
) -> None:  # noqa: ANN001
    """costmodel_check_3 measures the store calibration's four states (the same build settings, so
    the same hashes) on the calibration's windows, Iceberg's local planning only, then five shapes
    at 100,000 entries in 150 commits, a size no earlier check's config names, on the store at +20 ms."""
    from icelab.core.config.base import as_dict

    def chosen(name: str) -> dict:
        return {k: v for k, v in as_dict(compose_cfg(f"experiment={name}"), "meta").items() if v is not None}

    calibration, check = chosen("costmodel_calibrate_store"), chosen("costmodel_check_3")
    ladder = {k: v for k, v in check.items() if not k.startswith("heldout_")}
    assert set(ladder) == set(calibration)
    build_keys = ("data_files", "manifests", "days", "rewrites", "partitioning", "schema", "repetitions")
    for name, size in ladder.items():
        assert [size[k] for k in build_keys] == [calibration[name][k] for k in build_keys]
        assert size["parquet"] is False and size["modes"] == ["local"]
        assert size["windows"] in (None, ["1d", "30d", "180d"], calibration[name]["windows"])
    held = {k: v for k, v in check.items() if k.startswith("heldout_")}
    assert len(held) == 5 and {(v["data_files"], v["manifests"]) for v in held.values()} == {(100_000, 150)}
    earlier = [chosen("costmodel_check"), chosen("costmodel_check_2")]
    assert all(
        (v["data_files"], v["manifests"]) != (100_000, 150) for found in earlier for v in found.values()
    )
    cfg = compose_cfg("experiment=costmodel_check_3")
    assert cfg.storage.kind == "object" and cfg.storage.latency_ms == 20 and cfg.experiment.model_inputs
