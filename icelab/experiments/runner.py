"""Dispatch a composed config to its experiment module."""

from __future__ import annotations

import importlib

from omegaconf import DictConfig

from icelab.core.errors import UserError


def run_experiment(cfg: DictConfig) -> None:
    """Import `icelab.experiments.<experiment.task>` and call its `run(cfg)`."""
    task = cfg.experiment.task
    try:
        module = importlib.import_module(f"icelab.experiments.{task}")
    except ModuleNotFoundError as exc:
        if exc.name == f"icelab.experiments.{task}":
            raise UserError(f"experiment task '{task}' has no module icelab/experiments/{task}.py") from None
        raise
    module.run(cfg)
