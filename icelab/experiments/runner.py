"""Dispatch a composed config to its experiment module."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omegaconf import DictConfig

from icelab.core.errors import UserError


def task_run(task: str) -> Callable[[DictConfig], Any]:
    """The `run(cfg)` of the experiment module `task` names, importing only that module.

    Importing all of them cost every `python run.py` about 3 s of CPU more than planning's alone
    (costmodel_calibrate's statsmodels and scipy, doctor_catalogue's SQL catalog of pyiceberg,
    canonical's charts), which a run of one task never uses.
    """
    match task:
        case "canonical":
            from icelab.experiments.canonical import run
        case "costmodel_calibrate":
            from icelab.experiments.costmodel_calibrate import run
        case "datagen":
            from icelab.experiments.datagen import run
        case "doctor":
            from icelab.experiments.doctor import run
        case "doctor_catalogue":
            from icelab.experiments.doctor_catalogue import run
        case "manifest_health":
            from icelab.experiments.manifest_health import run
        case "metadata_scale":
            from icelab.experiments.metadata_scale import run
        case "planning":
            from icelab.experiments.planning import run
        case "schema_evolution":
            from icelab.experiments.schema_evolution import run
        case "snapshot_expiry":
            from icelab.experiments.snapshot_expiry import run
        case "verify":
            from icelab.experiments.verify import run
        case _:
            raise UserError(f"experiment task '{task}' has no module icelab/experiments/{task}.py")
    return run


def run_experiment(cfg: DictConfig) -> None:
    """Call the `run(cfg)` of the module `experiment.task` names."""
    task_run(cfg.experiment.task)(cfg)
