"""What a page reads besides a run's measurements: the reference run of an experiment, the
protocol configured today, a run's timings and its provenance line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from icelab.core.runs import Run, find_runs, latest_runs

CONF = Path(__file__).resolve().parents[3] / "conf"


def reference_run(results: Path, experiment: str, reference_set: str = "") -> Run:
    """The newest complete run of `experiment` under `<results>/reference` (or the reference set
    of that name inside it, kept apart from the main set: `costmodel-sitting`, ...).

    Raises:
        LookupError: when none is stored (a block must not be written without its result).
    """
    base = results / "reference" / reference_set if reference_set else results / "reference"
    run = latest_runs(find_runs(base)).get(experiment)
    if run is None:
        raise LookupError(f"no complete {experiment} run under {base}")
    return run


def default_protocol(experiment: str, conf: Path = CONF) -> dict:
    """An experiment's protocol as configured now: conf/config.yaml's, with
    conf/experiment/<experiment>.yaml's on top (what `python run.py experiment=<it>` measures)."""
    merged = OmegaConf.merge(
        OmegaConf.load(conf / "config.yaml")["protocol"],
        OmegaConf.load(conf / "experiment" / f"{experiment}.yaml").get("protocol", {}),
    )
    return OmegaConf.to_container(merged)


def minutes_between(start: str, end: str) -> float:
    """Minutes from one ISO timestamp to another."""
    return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds() / 60


def run_minutes(run: Run) -> float | None:
    """Minutes from the run's process start (else the opening of its directory) to its finish
    (else its end), from run.json; None when either is not recorded."""
    meta = run.meta()
    start = meta.get("process_started_utc") or meta.get("started_utc")
    end = meta.get("finished_utc") or meta.get("ended_utc")
    if not start or not end:
        return None
    return minutes_between(start, end)


def steady_rows(measurements: pd.DataFrame, warmups: int) -> pd.Series:
    """Which rows the steady-state phase wrote: warm-ups numbered below the warm-up rounds'
    repetitions (-warmups .. -1), as `icelab.bench.protocol` numbers them."""
    return measurements["warmup"].astype(bool) & (measurements["repetition"] < -warmups)


def phase_minutes(rows: pd.DataFrame) -> float:
    """First to last `measured_utc` of `rows`, in minutes (0 for none)."""
    at = pd.to_datetime(rows["measured_utc"])
    return (at.max() - at.min()).total_seconds() / 60 if len(at) else 0.0


def commit_state(run: Run) -> str:
    """`<sha7> (clean|dirty)` from the run's env.json."""
    git = run.env().get("git") or {}
    commit = (git.get("commit") or "unknown")[:7]
    state = "dirty" if git.get("dirty") else "clean"
    return f"{commit} ({state})"


def provenance(run: Run) -> str:
    """`run <id>, commit <sha7> (clean|dirty)` from the run's env.json."""
    return f"run `{run.run_id}`, commit {commit_state(run)}"
