"""The planning cost model checked against stored runs: fitted on a `metadata_scale` run's states,
its held-out state and the medium real-data runs predicted; the one-sitting set, whose states and
medium runs were measured back to back; and how far repeated runs of the same cells lie apart.
"""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path

import pandas as pd

from icelab.analysis import planning_model, planning_runs
from icelab.core.runs import Run, find_runs, latest_runs

EXPERIMENT = planning_runs.EXPERIMENT
# results/reference/<this>: a metadata_scale run of the states the model is fitted on and the
# medium reference runs it predicts, measured back to back (one sitting), apart from the main set.
SITTING = "costmodel-sitting"
# Consecutive runs further apart than this are not one sitting.
SITTING_GAP = dt.timedelta(hours=1)
# How close a prediction must come to the measured planning to count as a good one.
BAR = 0.25


def predicted(fit: Run, frames: list[pd.DataFrame]) -> planning_model.Holdout:
    """The model fitted on `fit`'s states, the medium runs' measurements `frames` predicted."""
    measurements, states, windows = planning_runs.load(fit)
    return planning_model.holdout(measurements, states, windows, reference=frames)


def holdout(fit: Run, reference: Path) -> planning_model.Holdout:
    """The model fitted on `fit`'s states, the newest medium runs under `reference` predicted."""
    return predicted(fit, [planning_runs.measurements(r) for r in planning_runs.reference_runs(reference)])


def spread(runs: list[Run]) -> pd.DataFrame:
    """Per format, mode, dataset and layout, how far the medians of the cells `runs` share lie
    apart (`planning_model.spread_summary`)."""
    frames = {r.run_id: planning_runs.measurements(r) for r in runs}
    return planning_model.spread_summary(planning_model.repeat_spread(frames))


def utc(run: Run, key: str) -> dt.datetime:
    """A time run.json records (`started_utc`, `finished_utc`)."""
    return dt.datetime.fromisoformat(run.meta()[key])


def by_start(runs: list[Run]) -> list[Run]:
    """`runs`, the earliest started first."""
    return sorted(runs, key=lambda r: utc(r, "started_utc"))


def aqe(run: Run) -> str:
    """Whether the run planned with AQE on (env.json's Spark settings; unset is Spark's default,
    on): the states run and the medium runs it predicts compare like for like only when alike."""
    value = str(run.env().get("spark_conf", {}).get("spark.sql.adaptive.enabled", "true")).lower()
    return "AQE on" if value == "true" else "AQE off"


def measured_on(run: Run) -> str:
    """What a run measured: a metadata_scale run's states, another run's dataset."""
    return ", ".join(run.meta()["states"]) if run.experiment == EXPERIMENT else str(run.meta().get("dataset"))


def sitting_runs(results: Path) -> tuple[Run, list[Run]]:
    """The one-sitting set under `results`/reference: its metadata_scale run (the fit) and the
    medium runs it predicts.

    Raises:
        LookupError: when the set is missing a run.
        ValueError: when one run started more than SITTING_GAP after the one before it finished,
            or the runs did not all plan with AQE alike (`aqe`).
    """
    base = results / "reference" / SITTING
    fit = latest_runs(find_runs(base)).get(EXPERIMENT)
    refs = planning_runs.reference_runs(base)
    if fit is None or not refs:
        raise LookupError(f"no complete {EXPERIMENT} run and medium runs under {base}")
    ordered = by_start([fit, *refs])
    for before, after in itertools.pairwise(ordered):
        gap = utc(after, "started_utc") - utc(before, "finished_utc")
        if gap > SITTING_GAP:
            raise ValueError(f"{after.run_id} started {gap} after {before.run_id} finished: not one sitting")
    planned = {r.run_id: aqe(r) for r in ordered}
    if len(set(planned.values())) > 1:
        raise ValueError("not planned alike: " + ", ".join(f"{run} {how}" for run, how in planned.items()))
    return fit, refs


def sitting_check(results: Path) -> tuple[Run, list[Run], planning_model.Holdout]:
    """The one-sitting set's runs and the model fitted on its states, its medium runs predicted."""
    fit, refs = sitting_runs(results)
    return fit, refs, predicted(fit, [planning_runs.measurements(r) for r in refs])


def within(table: pd.DataFrame, bar: float = BAR) -> dict[str, int]:
    """Of a check's cells (`Holdout.reference`): how many, how many predicted within `bar` of the
    measured planning, and how many below it."""
    error = table["rel_error"]
    return {"cells": len(table), "within": int((error.abs() <= bar).sum()), "under": int((error < 0).sum())}


# The out-of-sample sets of a `planning_model.Holdout`, and what each is.
OUT_OF_SAMPLE = {
    "held_out": "the fitted run's states above the fit's limit",
    "reference": "the medium real-data runs",
}
OUT_OF_SAMPLE_COLUMNS = ["set", "what", "cells", "coverage", "median_abs_error"]


def out_of_sample(held: planning_model.Holdout, fmt: str, mode: str) -> pd.DataFrame:
    """Per out-of-sample set of `held` (OUT_OF_SAMPLE) with cells of `fmt`/`mode`: what it is, its
    cells, the share whose measured planning lay inside its predicted interval (the interval's
    coverage, measured), and the median absolute relative error; then `all`, the sets pooled."""
    tables = {name: getattr(held, name) for name in OUT_OF_SAMPLE}
    parts = {name: t[(t["format"] == fmt) & (t["mode"] == mode)] for name, t in tables.items() if not t.empty}
    parts = {name: t for name, t in parts.items() if not t.empty}
    if parts:
        parts["all"] = pd.concat(parts.values(), ignore_index=True)
    rows = [
        {
            "set": name,
            "what": OUT_OF_SAMPLE.get(name, "both sets pooled"),
            "cells": len(t),
            "coverage": float(t["planning_ms"].between(t["lo_ms"], t["hi_ms"]).mean()),
            "median_abs_error": float(t["rel_error"].abs().median()),
        }
        for name, t in parts.items()
    ]
    return pd.DataFrame(rows, columns=OUT_OF_SAMPLE_COLUMNS)
