"""The planning cost model's blind check, as docs/costmodel-check.md registers it: the registered
calibration's Iceberg fit (default local planning mode) predicts each held-out cell from the
table's own metadata (a run's model_inputs.csv, icelab.experiments.model_inputs), against the
cell's measured value: the median of its run medians over at least MIN_RUNS runs spread over at
least MIN_SITTINGS sittings. Then the three criterion figures and the interval's coverage. The
same for tables other engines wrote: the windows a doctor_catalogue run measured on each shape as
written (`catalogue_cells`), predicted from the inputs the doctor read of them.

A cell counts the runs of one commit (the registration says "at least 3 runs of one commit"):
`of_one_commit` keeps those and names the runs it left out, of another commit or of a work tree
with changes (not one commit's code).

A sitting is the run's `experiment.sitting` label when it was given one, else the UTC date of the
run (its id's first eight characters): runs of one sitting share a machine state, so the spread
between sittings is what the criterion's median must absorb.

The second registration (docs/costmodel-check-2.md) fits in every run: a run measures the
calibration ladder before its held-out states, and its held-out cells are predicted by the fit on
its own ladder cells (`ladder_predicted`), so a prediction and what it predicts share a machine
and a sitting. The tables other engines wrote are predicted by the fit on the ladder cells of the
held-out runs of their sitting (icelab.tools.blind_check pairs them). A cell's prediction is then
the median of its runs' predictions, as its measured value is the median of their measurements.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from icelab.analysis.planning_cells import (
    CALIBRATED_FEATURES,
    ICEBERG,
    ICEBERG_DEFAULT_MODE,
    cells,
    with_busiest,
)
from icelab.analysis.planning_model import Fit, fit_cells
from icelab.analysis.planning_runs import driver_cores, measurements
from icelab.analysis.shape_catalogue import catalogue
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

INPUTS_FILE = "model_inputs.csv"
STATES_FILE = "states.csv"
MIN_RUNS, MIN_SITTINGS = 3, 2
# The registered criterion: SHARE_WITHIN of the cells within WITHIN, none beyond NEVER_BEYOND, and
# the median signed error within BIAS.
WITHIN, SHARE_WITHIN, NEVER_BEYOND, BIAS = 0.25, 0.95, 0.50, 0.10
KEYS = ["dataset", "layout", "query_id", "window"]
# What a cell is predicted from, read of the table (`with_busiest` derives the busiest thread's).
# Every run of a cell must read the same counts (SAME_TABLE); manifest bytes may differ by a few
# between runs that write a table afresh (paths and ids in its manifests), so a cell takes their
# median.
SAME_TABLE = ["manifests_read", "entries_read", "largest_manifest_entries", "entries_matched"]
INPUTS = [*SAME_TABLE, "manifest_bytes_read"]


def sitting_label(run: Run) -> str | None:
    """The run's `experiment.sitting` label; None when it was given none."""
    try:
        label = (run.config().get("experiment") or {}).get("sitting")
    except (ValueError, OSError, AttributeError):
        label = None
    return str(label) if label else None


def sitting(run: Run) -> str:
    """The run's sitting: its `experiment.sitting` label, else its UTC date (`20261128`)."""
    return sitting_label(run) or run.run_id[:8]


def run_commit(run: Run) -> str | None:
    """The commit whose code the run measured (env.json's git); None when its work tree had
    changes or git could not tell: then it measured no one commit."""
    found = run.env().get("git") or {}
    return found.get("commit") if found.get("dirty") is False else None


def of_one_commit(runs: Sequence[Run], commit: str | None = None) -> tuple[str | None, list[Run], list[Run]]:
    """The runs of one commit: `commit` (a prefix of it will do), else the commit most of `runs`
    measured (on a tie, the one with the newest run). Returns the commit, its runs and the runs
    left out (another commit, a changed work tree, or no git)."""
    known = [(c, r) for r in runs if (c := run_commit(r))]
    if commit is None and known:
        counts = Counter(c for c, _ in known)
        newest = {c: max(r.run_id for k, r in known if k == c) for c in counts}
        commit = max(counts, key=lambda c: (counts[c], newest[c]))
    kept = [r for c, r in known if commit and c.startswith(commit)]
    chosen = run_commit(kept[0]) if kept else commit
    return chosen, kept, [r for r in runs if r not in kept]


def run_cells(run: Run) -> pd.DataFrame:
    """One run's Iceberg cells in the default planning mode: the median planning_ms over its
    measured plans (`n`), the driver's threads, and the cell's inputs from model_inputs.csv.

    Raises:
        ValueError: for a run without model_inputs.csv, or a measured cell it has no inputs for.
    """
    inputs = stored(run).table(INPUTS_FILE)
    if inputs is None:
        raise ValueError(f"{run.path}: no {INPUTS_FILE} (measure with experiment.model_inputs=true)")
    found = cells(measurements(run))
    found = found[(found["format"] == ICEBERG) & (found["mode"] == ICEBERG_DEFAULT_MODE)]
    found = found[[*KEYS, "planning_ms", "n", "planner_threads"]].merge(
        inputs.rename(columns={"profile": "layout"})[["dataset", "layout", "window", *INPUTS]],
        on=["dataset", "layout", "window"],
        how="left",
        validate="many_to_one",
    )
    missing = found[found[INPUTS].isna().any(axis=1)]
    if not missing.empty:
        first = missing.iloc[0]
        raise ValueError(
            f"{run.path}: no model inputs for {first['dataset']}/{first['layout']}/{first['window']}"
        )
    return found.assign(run_id=run.run_id, sitting=sitting(run))


def catalogue_cells(run: Run) -> pd.DataFrame:
    """One doctor_catalogue run's windows measured on each shape as written (tables plain Spark
    SQL and pyiceberg wrote): the planning measured, the driver's threads, and the model's inputs
    the doctor read from the table's metadata; empty when the run measured none."""
    threads = driver_cores(run)
    rows = [
        {
            "dataset": shape["shape"],
            "layout": f"as written ({shape['writer']})",
            "query_id": "count_window",
            "window": w["window"],
            "planning_ms": w["measured_ms"],
            "n": w["measured_plans"],
            "planner_threads": threads,
            "doctor_ms": w.get("predicted_ms"),
            **{c: w.get(c) for c in INPUTS},
        }
        for shape in catalogue(run)["shapes"]
        for w in shape.get("now") or []
        if w.get("measured_ms") is not None
    ]
    columns = [*KEYS, "planning_ms", "n", "planner_threads", "doctor_ms", *INPUTS]
    return pd.DataFrame(rows, columns=columns).assign(run_id=run.run_id, sitting=sitting(run))


def measured(runs: Sequence[Run]) -> pd.DataFrame:
    """Per cell of metadata_scale runs (`run_cells`): the median of its run medians, how many runs
    and sittings measured it, and its inputs (which every run must agree on: the same table read
    the same way).

    Raises:
        ValueError: for no runs, or runs that read one cell's inputs differently.
    """
    if not runs:
        raise ValueError("no held-out runs")
    return combined(pd.concat([run_cells(r) for r in runs], ignore_index=True))


def combined(per_run: pd.DataFrame) -> pd.DataFrame:
    """Cells measured by several runs (`run_cells` or `catalogue_cells` rows) as one row each: the
    median of the run medians, runs, sittings and the inputs.

    Raises:
        ValueError: for runs that read one cell's inputs differently.
    """
    grouped = per_run.groupby(KEYS, sort=True)
    differ = grouped[SAME_TABLE].nunique().gt(1).any(axis=1)
    if differ.any():
        cell = "/".join(map(str, differ[differ].index[0]))
        raise ValueError(f"the runs read different model inputs for {cell}: not the same table")
    doctor = {"doctor_ms": ("doctor_ms", "median")} if "doctor_ms" in per_run else {}
    # Predicted in each run (the second registration): the median of the runs' predictions.
    each = {c: (c, "median") for c in ("predicted_ms", "lo_ms", "hi_ms") if c in per_run}
    each |= {"extrapolated": ("extrapolated", "any")} if "extrapolated" in per_run else {}
    out = grouped.agg(
        planning_ms=("planning_ms", "median"),
        **doctor,
        **each,
        runs=("run_id", "nunique"),
        sittings=("sitting", "nunique"),
        threads=("planner_threads", "median"),
        **{c: (c, "first") for c in SAME_TABLE},
        manifest_bytes_read=("manifest_bytes_read", "median"),
    ).reset_index()
    out["complete"] = (out["runs"] >= MIN_RUNS) & (out["sittings"] >= MIN_SITTINGS)
    return out


def state_name(dataset: str) -> str:
    """A state's config name from its label: `meta_36k-c6bd41d82e22` -> `meta_36k`."""
    return str(dataset).rsplit("-", 1)[0]


def ladder_fit(table: pd.DataFrame, ladder: Sequence[str]) -> Fit:
    """The calibrated form (CALIBRATED_FEATURES) fitted on the cells of `table` (`run_cells`
    rows, of one run or one sitting's runs) whose state is a rung of `ladder`.

    Raises:
        ValueError: when the table holds too few ladder cells to fit.
    """
    part = table[table["dataset"].map(state_name).isin(ladder)]
    features = with_busiest(part, part["planner_threads"]).dropna(
        subset=[*CALIBRATED_FEATURES, "planning_ms"]
    )
    if len(features) < len(CALIBRATED_FEATURES) + 2:
        raise ValueError(
            f"{len(features)} ladder cells, too few to fit {len(CALIBRATED_FEATURES) + 1} coefficients"
        )
    return fit_cells(features.reset_index(drop=True), ICEBERG, ICEBERG_DEFAULT_MODE, CALIBRATED_FEATURES)


def ladder_predicted(table: pd.DataFrame, model: Fit) -> pd.DataFrame:
    """`table` (`run_cells` or `catalogue_cells` rows of one run) with `model`'s prediction of each
    row: predicted_ms, its 95% interval (lo_ms, hi_ms) and whether it extrapolates."""
    return _with_prediction(table, model, table["planner_threads"])


def scored_each(table: pd.DataFrame) -> pd.DataFrame:
    """Cells with a prediction (`combined` cells predicted in each run, or `predicted`'s): the
    signed relative error and whether the interval covers the measured value."""
    out = table.reset_index(drop=True)
    out["rel_error"] = (out["predicted_ms"] - out["planning_ms"]) / out["planning_ms"]
    out["covered"] = (out["lo_ms"] <= out["planning_ms"]) & (out["planning_ms"] <= out["hi_ms"])
    return out


def predicted(table: pd.DataFrame, model: Fit) -> pd.DataFrame:
    """`table` (`measured`) with the fit's prediction, its 95% prediction interval, whether it
    extrapolates, the signed relative error and whether the interval covers the measured value."""
    return scored_each(_with_prediction(table, model, table["threads"]))


def _with_prediction(table: pd.DataFrame, model: Fit, threads: pd.Series) -> pd.DataFrame:
    """`table` with `model`'s prediction of each row on `threads` planning threads."""
    found = model.predict(with_busiest(table, threads).reset_index(drop=True))
    return table.reset_index(drop=True).join(found[["predicted_ms", "lo_ms", "hi_ms", "extrapolated"]])


@dataclass(frozen=True)
class Verdict:
    """The criterion's three figures on the complete cells, and whether each and all hold."""

    cells: int  # complete cells scored
    incomplete: int  # cells with too few runs or sittings: not scored
    share_within: float
    max_abs_error: float
    median_signed_error: float
    coverage: float

    @property
    def holds(self) -> dict[str, bool]:
        return {
            "share_within": self.share_within >= SHARE_WITHIN,
            "none_beyond": self.max_abs_error <= NEVER_BEYOND,
            "no_bias": abs(self.median_signed_error) <= BIAS,
        }

    @property
    def passed(self) -> bool:
        """All three hold, on at least one complete cell and with none left incomplete."""
        return self.cells > 0 and self.incomplete == 0 and all(self.holds.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "cells": self.cells,
            "incomplete": self.incomplete,
            "share_within": self.share_within,
            "max_abs_error": self.max_abs_error,
            "median_signed_error": self.median_signed_error,
            "coverage": self.coverage,
            "holds": self.holds,
            "passed": self.passed,
        }


def verdict(scored: pd.DataFrame, predicted_by: str = "predicted_ms") -> Verdict:
    """The criterion on the complete cells of `scored` (`predicted`); NaN figures when none is.
    `predicted_by` names the prediction judged: the calibration's, or (`doctor_ms`, tables other
    engines wrote) the one the doctor itself made when it read the table, whose interval is not
    stored (coverage NaN)."""
    done = scored[scored["complete"]]
    errors = (done[predicted_by] - done["planning_ms"]) / done["planning_ms"]
    covered = done["covered"] if predicted_by == "predicted_ms" else pd.Series(dtype=float)
    nan = float("nan")
    return Verdict(
        cells=len(done),
        incomplete=int((~scored["complete"]).sum()),
        share_within=float((errors.abs() <= WITHIN).mean()) if len(done) else nan,
        max_abs_error=float(errors.abs().max()) if len(done) else nan,
        median_signed_error=float(errors.median()) if len(done) else nan,
        coverage=float(covered.mean()) if len(covered) else nan,
    )


def state_sizes(runs: Sequence[Run]) -> dict[str, int]:
    """Data files of each state the runs measured (their states.csv); a run without one names none."""
    sizes: dict[str, int] = {}
    for run in runs:
        table = stored(run).table(STATES_FILE)
        if table is not None:
            sizes |= {str(k): int(v) for k, v in table.groupby("dataset")["data_files"].first().items()}
    return sizes


def by_size(scored: pd.DataFrame, sizes: dict[str, int]) -> list[tuple[int, Verdict]]:
    """The criterion per state size (its data files), smallest first, on `scored` (`predicted`):
    whether the errors grow with the table. Cells of a state of unknown size are left out."""
    size = scored["dataset"].map(sizes)
    return [(int(n), verdict(group)) for n, group in scored.groupby(size, sort=True)]
