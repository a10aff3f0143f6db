"""Task `costmodel_calibrate`: the planning cost model calibrated on the engine and storage the
config names. It runs `metadata_scale` on a short ladder of states (conf/experiment/
costmodel_calibrate.yaml), fits the model on that run and stores the fit with its provenance as
a calibration (icelab.analysis.calibration) in <paths.results_dir>/calibrations/, where `icelab
costmodel` and the doctor find it when they are asked about that engine and storage.
"""

from __future__ import annotations

import time
from pathlib import Path

from omegaconf import DictConfig, open_dict

from icelab.analysis import calibration
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE
from icelab.core.config.metadata import meta_names
from icelab.core.errors import UserError
from icelab.core.runs import read_run
from icelab.experiments import metadata_scale


def run(cfg: DictConfig) -> Path | None:
    """Measure the ladder, fit, store the calibration.

    Returns:
        The calibration file (None with experiment.build_only: nothing was measured).
    """
    started = time.monotonic()
    # Iceberg's default planning alone, on any states selected: what predictions and the doctor
    # use (the other modes and Parquet's listing would double the time and are not used). Set
    # before the run, so its config.yaml records it.
    with open_dict(cfg):
        for name in meta_names(cfg):
            cfg.meta[name].modes = [ICEBERG_DEFAULT_MODE]
            cfg.meta[name].parquet = False
    run_dir = metadata_scale.run(cfg)
    if run_dir is None:
        return None
    found = read_run(Path(run_dir))
    if found is None:
        raise UserError(f"{run_dir}: the calibration run left no run directory")
    try:
        made = calibration.record(found, wall_s=round(time.monotonic() - started, 1))
    except ValueError as exc:
        raise UserError(f"{run_dir}: no calibration: {exc}") from None
    path = calibration.write(made, Path(cfg.paths.results_dir) / calibration.MADE)
    fits = ", ".join(f"{f['format']}/{f['mode']} ({f['n']} cells, R² {f['r2']:.3f})" for f in made["fits"])
    where = calibration.Where.of(made["engine"], made["storage"], made["latency_ms"])
    print(
        f"calibration {where}: {fits}; run {found.run_id}; "
        f"{made['provenance']['calibrate_s'] / 60:.1f} min -> {path}"
    )
    return path
