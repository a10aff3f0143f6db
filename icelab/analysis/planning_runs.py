"""The stored runs a planning cost model is fitted on and checked against: the newest complete
`metadata_scale` run (results/runs, then results/reference) unless another is named, and the
real-data planning runs (`manifest_8mb`, `manifest_sweep`) of a reference directory."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.core.contract import MEASUREMENTS
from icelab.core.errors import UserError
from icelab.core.runs import Run, find_run, find_runs, latest_runs, load_run

EXPERIMENT = "metadata_scale"
REFERENCE_EXPERIMENTS = ("manifest_8mb", "manifest_sweep")


def locate(results: str | None, base: Path = Path("results")) -> Run:
    """The run to fit on: the newest complete metadata_scale run under `base`/runs, then
    `base`/reference; or what `results` names (a run directory or id, an experiment directory, or
    a results directory holding metadata_scale runs).

    Raises:
        UserError: when there is no such run, or it has no measurements.
    """
    if results is None:
        searched = [base / "runs", base / "reference"]
    else:
        path = Path(results)
        searched = [p for p in (path / "runs", path / "reference", path) if (p / EXPERIMENT).is_dir()]
    for root in searched:
        complete = _complete(root)
        if complete:
            return _with_measurements(complete[-1])
    if results is None:
        raise UserError(
            f"no complete {EXPERIMENT} run under {base}/runs or {base}/reference (give --results RUN)"
        )
    try:
        return _with_measurements(find_run(base, results))
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from None


def newest_first(base: Path = Path("results")) -> list[Run]:
    """Every complete metadata_scale run with measurements under `base`/runs, then
    `base`/reference, newest first in each: where `locate` looks, for a caller that passes over a
    run it cannot fit (a run of one state has too few cells)."""
    roots = (base / "runs", base / "reference")
    return [r for root in roots for r in reversed(_complete(root)) if stored(r).has_measurements()]


def _complete(root: Path) -> list[Run]:
    """The complete metadata_scale runs under `root`, oldest first."""
    return [r for r in map(load_run, sorted((root / EXPERIMENT).glob("*"))) if r and r.complete]


def _with_measurements(run: Run) -> Run:
    if not stored(run).has_measurements():
        raise UserError(f"{run.path} has no {MEASUREMENTS}")
    return run


def load(run: Run) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """A run's measurements (`measurements`), and its states.csv and windows.csv when it has them."""
    data = stored(run)
    return measurements(run), data.table("states.csv"), data.table("windows.csv")


def driver_cores(run: Run) -> int:
    """The cores of the machine a run's driver ran on (env.json: machine.cores): the threads
    Iceberg's planning pool and local[*] had.

    Raises:
        UserError: when the run's env.json does not say.
    """
    try:
        cores = run.env().get("machine", {}).get("cores")
    except (ValueError, AttributeError):  # env.json unreadable, or not shaped as icelab writes it
        cores = None
    if not isinstance(cores, int) or cores < 1:
        raise UserError(f"{run.path / 'env.json'} does not say the driver's cores (machine.cores)")
    return cores


def measurements(run: Run) -> pd.DataFrame:
    """A run's measurements with `planner_threads` (`driver_cores`).

    Raises:
        UserError: when the run's env.json does not say its cores.
    """
    return stored(run).measurements().assign(planner_threads=driver_cores(run))


def repeat_runs(reference: Path) -> list[Run]:
    """Every complete run of the real-data planning experiments under `reference`, oldest first."""
    if not reference.is_dir():
        return []
    found = [r for r in find_runs(reference) if r.experiment in REFERENCE_EXPERIMENTS and r.complete]
    return sorted(found, key=lambda r: r.run_id)


def newest_of(runs: list[Run]) -> list[Run]:
    """Of `repeat_runs`, the newest of each real-data planning experiment (what --holdout predicts)."""
    latest = latest_runs(runs)
    return [latest[e] for e in REFERENCE_EXPERIMENTS if e in latest]


def reference_runs(reference: Path) -> list[Run]:
    """The newest complete run of each real-data planning experiment under `reference`."""
    return newest_of(repeat_runs(reference))
