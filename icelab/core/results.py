"""Run directories under results/runs/<experiment>/<run_id>/ and the files written into them.

Results are small and live on the driver's local disk, whatever file system holds the data.
Every file is written to a temporary name and renamed, so a reader never sees half of one, and
every JSON or YAML file goes through `provenance.redact`, so no credential reaches one.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from omegaconf import DictConfig, OmegaConf

from icelab.core.errors import UserError
from icelab.core.provenance import redact


def new_run_dir(results_dir: str, experiment: str) -> Path:
    """Create results/runs/<experiment>/<utc timestamp>-<short id>/."""
    run_id = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]
    path = Path(results_dir) / "runs" / experiment / run_id
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        raise UserError(f"results directory '{results_dir}' is not writable: {exc.strerror}") from None
    return path


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary sibling of `path` to write; renamed onto `path` when the block ends cleanly.

    The name starts with a dot and ends in `.tmp-<id>`, so globs for results (`*.csv`, `*.png`)
    never match a leftover one. On an error the temporary file is removed and `path` is untouched.
    """
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        yield tmp
        os.replace(tmp, path)  # atomic on one file system: readers see the old file or the new one
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        raise UserError(
            f"no space left on the device holding '{path.parent}' while writing {path.name}; "
            "free some space or give another paths.results_dir"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path: Path, text: str) -> None:
    """Write a text file via a temporary sibling and a rename.

    Raises:
        UserError: when the disk is full (the partial temporary file is removed).
    """
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: Path, data: Any) -> None:
    """Atomically write JSON (indented, non-JSON values as strings), credentials redacted."""
    write_atomic(path, json.dumps(redact(data), indent=2, default=str) + "\n")


def write_config(path: Path, cfg: DictConfig) -> None:
    """The resolved config of the run, next to its results, credentials redacted."""
    write_atomic(path, OmegaConf.to_yaml(OmegaConf.create(redact(cfg))))


def write_csv(path: Path, frame: pd.DataFrame) -> None:
    """Atomically write a frame as CSV (no index)."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def write_parquet(path: Path, data: pd.DataFrame | pa.Table) -> None:
    """Atomically write a frame (no index) or an Arrow table as Parquet."""
    with atomic_path(path) as tmp:
        if isinstance(data, pa.Table):
            pq.write_table(data, tmp)
        else:
            data.to_parquet(tmp, index=False)


def copy_result(src: Path, dst: Path) -> None:
    """Copy one results file atomically. JSON files and config.yaml are redacted again on the way:
    a run written before redaction covered a key must not carry that credential any further."""
    if src.suffix == ".json":
        write_json(dst, json.loads(src.read_text()))
    elif src.name == "config.yaml":
        write_config(dst, OmegaConf.create(yaml.safe_load(src.read_text()) or {}))
    else:
        with atomic_path(dst) as tmp:
            shutil.copy2(src, tmp)
