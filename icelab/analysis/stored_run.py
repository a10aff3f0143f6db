"""One stored run's files as frames, each read once while it is unchanged.

`icelab.core.runs` finds runs and says what they are (experiment, task, status, config); it stays
in core because the layers below this one (the doctor's library in bench, the experiments that
write runs) use it. What a run measured is read here: measurements.parquet through the contract
(`icelab.core.contract.read_measurements`, which fills columns an older run lacks) and the CSVs a
task derives from it (states.csv, windows.csv, plan_check.csv, ...). A file is cached under its
path, modification time and size, so the docs, the charts and the commands can ask many times
and a rewritten file is read again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import stats
from icelab.analysis.rows import counted
from icelab.core.contract import MEASUREMENTS, read_measurements
from icelab.core.runs import Run, read_run


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=64)
def _cached(path: Path, stamp: tuple[int, int], compute: Callable[[Path], Any]) -> Any:
    """`compute(path)`, once per content of the file at `path` (`stamp` changes with it)."""
    return compute(path)


def _read(path: Path, compute: Callable[[Path], Any]) -> Any:
    return _cached(path, _stamp(path), compute)


def _measurements(path: Path) -> pd.DataFrame:
    return read_measurements(path.parent)


def _counted(path: Path) -> pd.DataFrame:
    return counted(_read(path, _measurements))


@functools.cache
def _summarizer(unstable_iqr: float) -> Callable[[Path], pd.DataFrame]:
    """`stats.summarize` at one threshold, as one function per threshold (the cache's key)."""
    return lambda path: stats.summarize(_read(path, _measurements), unstable_iqr)


class StoredRun:
    """A stored run's measurements and derived tables (frames returned are the caller's own)."""

    def __init__(self, run: Run) -> None:
        self.run = run

    @property
    def path(self) -> Path:
        return self.run.path

    def has_measurements(self) -> bool:
        return (self.path / MEASUREMENTS).is_file()

    def measurements(self) -> pd.DataFrame:
        """measurements.parquet in the contract's columns (`read_measurements`)."""
        return _read(self.path / MEASUREMENTS, _measurements).copy()

    def counted(self) -> pd.DataFrame:
        """The rows that count (`rows.counted`: no warm-ups, status ok)."""
        return _read(self.path / MEASUREMENTS, _counted).copy()

    def summary(self, unstable_iqr: float) -> pd.DataFrame:
        """`stats.summarize` of the measurements: per-case medians, spreads and counts."""
        return _read(self.path / MEASUREMENTS, _summarizer(unstable_iqr)).copy()

    def table(self, name: str) -> pd.DataFrame | None:
        """A CSV the run's task derived (`states.csv`, `windows.csv`, ...); None when it has none."""
        path = self.path / name
        return _read(path, pd.read_csv).copy() if path.is_file() else None


def stored(run: Run | Path) -> StoredRun:
    """The stored run `run` (a Run, or the path of a run directory).

    Raises:
        LookupError: when the path is not a run directory.
    """
    if isinstance(run, Run):
        return StoredRun(run)
    found = read_run(run)
    if found is None:
        raise LookupError(f"{run}: not a run directory")
    return StoredRun(found)
