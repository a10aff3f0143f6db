"""Planning predicted by the planning cost model (`icelab.analysis.planning_model`, the one
`icelab costmodel` fits) from what the doctor reads of a table.

The model is the calibration of the doctor's engine and storage (`icelab costmodel calibrate`;
results/calibrations, then results/reference/calibrations) when one matches, else fitted once per
doctor run on the run `icelab costmodel` fits on (the newest complete `metadata_scale` run under
results/runs, then results/reference); Iceberg's default planning mode (local, on the driver's
worker pool), on as many threads as the calibration's or that run's driver had.
A window's reads map onto the model's inputs: the data manifests it keeps (manifests_read), their
live entries (entries_read), the largest one's (largest_manifest_entries, which sets the busiest
thread), the live entries of the partitions inside it (entries_matched: all of a partition's, where
column statistics may prune a window shorter than a partition further), and their bytes.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from icelab.analysis import calibration
from icelab.analysis.calibration import Where
from icelab.analysis.planning_cells import ICEBERG, ICEBERG_DEFAULT_MODE, small_manifests, with_busiest
from icelab.analysis.planning_model import LEVEL, Fit, fit, predict_by_regime
from icelab.analysis.planning_runs import load, newest_first
from icelab.core.contract import MEASUREMENTS
from icelab.core.errors import UserError
from icelab.core.runs import read_run

NO_FIT = "no cost model fitted"
NO_FIT_LINE = (
    f"{NO_FIT}: no complete metadata_scale run under results/runs or results/reference to fit it on, "
    "so no prediction"
)
# What a window reads, as the model's inputs (besides the threads): the doctor's names for them.
READS = (
    "manifests_read",
    "entries_read",
    "largest_manifest_entries",
    "entries_matched",
    "manifest_bytes_read",
)


@dataclass(frozen=True)
class PlanningModel:
    """The Iceberg fit of one planning mode, and the threads it predicts for; with `small`, the
    same form fitted on many small manifests alone, which predicts the windows of that regime
    (`planning_cells.small_manifests`)."""

    fit: Fit
    run: str  # <experiment>/<run_id> it was fitted on
    path: str
    threads: int  # the fitted run's driver cores
    small: Fit | None = None
    # The calibration it came from (run, commit, sitting, when it was made); None for a fit on a run.
    calibration: dict[str, Any] | None = None

    def fit_of(self, reads: pd.DataFrame) -> pd.Series:
        """Per row of `reads` (columns READS), the fit that predicts it: True for `small`."""
        if self.small is None:
            return pd.Series(False, index=reads.index)
        return small_manifests(reads)

    def predict(self, reads: pd.DataFrame) -> pd.DataFrame:
        """predicted_ms, lo_ms, hi_ms (95% prediction interval), extrapolated (an input outside
        the fitted range of the fit used) and small_manifests (which fit) for each row of `reads`
        (columns READS; index kept)."""
        out, use = predict_by_regime(self.fit, self.small, with_busiest(reads, self.threads))
        return out.assign(small_manifests=use.astype(bool))

    def _fit_for(self, small: bool) -> Fit:
        """`small` when asked for and fitted, else the fit over every cell."""
        return self.small if small and self.small is not None else self.fit

    def predictions(self, reads: Sequence[dict[str, float]]) -> list[dict[str, Any]]:
        """For each window's reads (keys READS): ms predicted, range_ms (its 95% prediction
        interval), extrapolated, the fit (`all` or `small_manifests`) and that fit's fixed part
        (fixed_ms, its constant: what a plan costs before it reads a manifest); to 0.1 ms."""
        if not reads:
            return []
        out = self.predict(pd.DataFrame(list(reads), columns=list(READS)))
        return [
            {
                "ms": round(float(r.predicted_ms), 1),
                "range_ms": [round(float(r.lo_ms), 1), round(float(r.hi_ms), 1)],
                "extrapolated": bool(r.extrapolated),
                "fit": "small_manifests" if r.small_manifests else "all",
                "fixed_ms": round(self._fit_for(bool(r.small_manifests)).coefficient("const"), 1),
            }
            for r in out.itertuples()
        ]

    def gains(
        self, now: Sequence[dict[str, float]], after: Sequence[dict[str, float]]
    ) -> list[dict[str, float]]:
        """For each pair of a window's reads now and after a change: the planning it saves
        (gain_ms, now minus after) and the model's 95% error on that difference (error_ms). When
        one fit predicts both, the confidence half-width of its coefficients applied to the change
        in the inputs (the scatter of single plans is common to both and cancels); when the two
        are of different regimes (`small`), the half-widths of the two means combined."""
        if not now:
            return []
        frames = [pd.DataFrame(list(r), columns=list(READS)) for r in (now, after)]
        uses = [self.fit_of(f) for f in frames]
        derived = [with_busiest(f, self.threads) for f in frames]
        out = []
        for i in range(len(frames[0])):
            fits = [self._fit_for(bool(u.iloc[i])) for u in uses]
            rows = [f.design(d.iloc[[i]]).to_numpy(float)[0] for f, d in zip(fits, derived, strict=True)]
            if fits[0] is fits[1]:
                out.append(_gain(fits[0], rows[0] - rows[1]))
                continue
            means = [float(r @ _params(f)) for r, f in zip(rows, fits, strict=True)]
            halves = [_gain(f, r)["error_ms"] for r, f in zip(rows, fits, strict=True)]
            error = float(np.hypot(*halves))
            out.append({"gain_ms": round(means[0] - means[1], 1), "error_ms": round(error, 1)})
        return out

    @property
    def made(self) -> str | None:
        """When its calibration was made (None for a fit on a run)."""
        return (self.calibration or {}).get("created_utc")

    def age_hours(self, now: dt.datetime | None = None) -> float | None:
        """Hours since its calibration was made (None for a fit on a run)."""
        return calibration.age_hours(self.made, now)

    def stale_note(self, now: dt.datetime | None = None) -> str | None:
        """`calibration.stale_note` of its calibration (None for a fit on a run)."""
        return calibration.stale_note(self.made, now)

    def describe(self) -> str:
        """One line: which fit, on which run (a calibration: when it was made)."""
        made = self.made
        small = (
            f"; windows of many small manifests by its fit on those alone ({self.small.n} cells)"
            if self.small is not None
            else ""
        )
        return (
            f"cost model {self.fit.format}/{self.fit.mode} on {self.threads} planning threads, fitted on "
            f"run {self.run}{f', made {made} ({self.age_hours():,.1f} h ago)' if made else ''} "
            f"({self.fit.n} cells, R² {self.fit.r2:.3f})"
            f"{small}; * beyond the fitted range"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "path": self.path,
            "threads": self.threads,
            "calibration": self.calibration,
            **self.fit.summary(),
            "small_manifests": self.small.summary() if self.small is not None else None,
        }

    @classmethod
    def of_calibration(
        cls, found: calibration.Calibration, mode: str = ICEBERG_DEFAULT_MODE
    ) -> PlanningModel:
        """The model of a calibration's Iceberg fit of `mode` (and its many-small-manifests fit).

        Raises:
            KeyError: when the calibration has no fit of `mode`.
        """
        facts = ("run_id", "created_utc", "sitting", "git")
        return cls(
            calibration.iceberg_fit(found, mode),
            f"calibration/{found.where.key} (run {found.run_id})",
            str(found.path),
            found.threads,
            calibration.small_manifest_fit(found, mode),
            {k: found.provenance.get(k) for k in facts},
        )


def _params(fit: Fit) -> np.ndarray:
    return np.asarray(fit.result.params, dtype=float)


def _gain(fit: Fit, diff: np.ndarray) -> dict[str, float]:
    """`diff` (a change in the design row) times the fit's coefficients, and its 95% error: the
    confidence half-width of the coefficients applied to it."""
    result = fit.result
    gain = float(diff @ _params(fit))
    se = float(np.sqrt(diff @ np.asarray(result.cov_params(), dtype=float) @ diff))
    half = stats.t.ppf(0.5 + LEVEL / 2, result.df_resid) * se
    return {"gain_ms": round(gain, 1), "error_ms": round(float(half), 1)}


def fitted(bases: Sequence[Path], mode: str = ICEBERG_DEFAULT_MODE) -> PlanningModel | None:
    """The model of Iceberg's `mode` fitted on the newest complete metadata_scale run under the
    first of `bases` that holds one giving a fit of `mode` (each searched as `icelab costmodel`
    searches results/: runs, then reference); a run that gives none (a run of one state has too
    few cells) gives way to the next older. None when no run does."""
    for base in bases:
        for run in newest_first(base):
            measured = run.path / MEASUREMENTS
            try:
                fits, threads = _fits(run.path, measured.stat().st_mtime_ns, measured.stat().st_size)
            except (UserError, ValueError, OSError):
                continue
            if mode in fits:
                return PlanningModel(fits[mode], f"{run.experiment}/{run.run_id}", str(run.path), threads)
    return None


@functools.lru_cache(maxsize=4)
def _fits(path: Path, mtime_ns: int, size: int) -> tuple[dict[str, Fit], int]:
    """The fits of one run and its planner threads, once per content of its measurements (a
    process checking many tables fits once: the fit takes seconds)."""
    run = read_run(path)
    if run is None:
        raise UserError(f"{path}: not a run directory")
    frame, states, windows = load(run)
    return fit(frame, ICEBERG, states=states, windows=windows), int(frame["planner_threads"].iloc[0])


def calibrated(where: Where, bases: Sequence[Path], mode: str = ICEBERG_DEFAULT_MODE) -> PlanningModel | None:
    """The model of Iceberg's `mode` from the calibration of `where` (`icelab costmodel calibrate`:
    the calibrations made under each of `bases`, then the committed ones); None when none matches
    the engine and storage, or it has no fit of `mode`."""
    found = calibration.matching(where, bases)
    if found is None:
        return None
    try:
        return PlanningModel.of_calibration(found, mode)
    except KeyError:
        return None


def doctor_model(where: Where, bases: Sequence[Path]) -> PlanningModel | None:
    """The doctor's model: the calibration of its engine and storage, else the fit on the newest
    metadata_scale run, else None. Where the doctor measured a window, only the model's ratios are
    used (`anchor`); how each form fared in its blind checks: docs/advice-quality.md."""
    return calibrated(where, bases) or fitted(bases)


def window_reads(window: dict[str, Any]) -> dict[str, float]:
    """A window as `check.window_kept` reports it, as the model's inputs (READS): the delete
    manifests it keeps count as manifests read, since planning opens them too."""
    return {
        "manifests_read": window["manifests"] + window.get("delete_manifests", 0),
        "entries_read": window["entries_read"] + window.get("delete_entries_read", 0),
        "largest_manifest_entries": window["largest_manifest_entries"],
        "entries_matched": window["entries_matched"],
        "manifest_bytes_read": window["manifest_bytes"] + window.get("delete_manifest_bytes", 0),
    }
