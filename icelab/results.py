"""Run directories under results/runs/<experiment>/<run_id>/ and their provenance files.

Results are small and live on the driver's local disk, whatever file system holds the data.
Every file is written to a temporary name and renamed, so a reader never sees half of one.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import uuid
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from icelab.errors import UserError


def new_run_dir(results_dir: str, experiment: str) -> Path:
    """Create results/runs/<experiment>/<utc timestamp>-<short id>/."""
    run_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]
    path = Path(results_dir) / "runs" / experiment / run_id
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        raise UserError(f"results directory '{results_dir}' is not writable: {exc.strerror}") from None
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write a text file via a temporary sibling and a rename.

    Raises:
        UserError: when the disk is full (the partial temporary file is removed).
    """
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno != errno.ENOSPC:
            raise
        raise UserError(
            f"no space left on the device holding '{path.parent}' while writing {path.name}; "
            "free some space or give another paths.results_dir"
        ) from None


def write_json(path: Path, data: Any) -> None:
    """Atomically write JSON (indented, non-JSON values as strings)."""
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


def write_config(path: Path, cfg: DictConfig) -> None:
    """The resolved config of the run, next to its results."""
    write_atomic(path, OmegaConf.to_yaml(cfg, resolve=True))
