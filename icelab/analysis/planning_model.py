"""A planning cost model: what query planning costs per manifest and per entry read (Iceberg) or
per partition and per file listed (Parquet), fitted on stored measurements and checked on table
sizes it was not fitted on.

The fit is weighted least squares on the median planning_ms of each (dataset, layout, mode,
query, window) cell over its measured repetitions (warm-ups and failed rows are never used;
`planning_cells`): Iceberg `planning_ms ~ 1 + manifests_read + busiest_thread_entries +
entries_matched`, Parquet `planning_ms ~ 1 + partitions_listed + files_listed`, one fit per
planning mode. Each cell weighs 1 / planning_ms^2, so the fit minimises relative error: the
question is "within x% of the measured", and the noise of a planning time grows with it (a 10 ms
cell and a 100 s cell are equally informative about the per-entry cost, an unweighted fit
listens to the 100 s cell alone).

statsmodels and scipy are imported where a fit or an interval needs them: together they take
seconds to import, which every `icelab` command importing this module (`--help`, a one-line error
for bad input) would pay.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from icelab.analysis.planning_cells import FEATURES, ICEBERG, PARQUET, UNITS, cells, small_manifests

LIMIT = 1_000_000  # the holdout check fits on datasets with at most this many data files
LEVEL = 0.95  # of the coefficient and prediction intervals
INTERVALS = {"obs": "prediction interval of a new cell median", "mean": "confidence interval of the mean"}


@dataclass(frozen=True)
class Fit:
    """One weighted least-squares fit (weights 1 / planning_ms^2): planning_ms of one format and
    planning mode against its features."""

    format: str
    mode: str
    features: tuple[str, ...]
    result: Any  # statsmodels' RegressionResultsWrapper
    cells: pd.DataFrame  # the cells it was fitted on

    @property
    def n(self) -> int:
        return int(self.result.nobs)

    @property
    def r2(self) -> float:
        return float(self.result.rsquared)

    def coefficient(self, term: str) -> float:
        """The fitted ms per one unit of `term` (ms per manifest, ms per entry, ...; `const`: fixed ms)."""
        return float(self.result.params[term])

    def coefficients(self, level: float = LEVEL) -> pd.DataFrame:
        """term, unit, estimate and its interval (conf_int at `level`), p-value, in display units."""
        ci = self.result.conf_int(alpha=1 - level)
        rows = []
        for term in ("const", *self.features):
            unit, scale = UNITS.get(term, (f"ms per {term}", 1.0))
            rows.append(
                {
                    "term": term,
                    "unit": unit,
                    "estimate": self.coefficient(term) * scale,
                    "ci_low": float(ci.loc[term, 0]) * scale,
                    "ci_high": float(ci.loc[term, 1]) * scale,
                    "p_value": float(self.result.pvalues[term]),
                }
            )
        return pd.DataFrame(rows)

    def diagnostics(self) -> dict[str, Any]:
        """Collinearity of the features: the condition number of the design with each column scaled
        to unit length (above about 30 the coefficients trade off against each other), and each
        feature's variance inflation factor (above about 10: it is nearly a mix of the others)."""
        from statsmodels.stats.outliers_influence import variance_inflation_factor

        exog = np.asarray(self.result.model.exog, dtype=float)
        scaled = exog / np.linalg.norm(exog, axis=0)
        singular = np.linalg.svd(scaled, compute_uv=False)
        with warnings.catch_warnings():
            # statsmodels warns when the design is poorly conditioned: the number reported here says so.
            warnings.simplefilter("ignore", UserWarning)
            vif = {
                name: float(variance_inflation_factor(exog, i)) if len(self.features) > 1 else 1.0
                for i, name in enumerate(self.features, start=1)
            }
        return {"condition_number": float(singular[0] / singular[-1]), "vif": vif}

    def design(self, features: pd.DataFrame) -> pd.DataFrame:
        """`features` as the model's exog: a constant, then its features in order."""
        exog = features[list(self.features)].astype(float).reset_index(drop=True)
        exog.insert(
            0, "const", 1.0
        )  # explicit: add_constant skips it when one row makes every column constant
        return exog

    def predict(self, features: pd.DataFrame, interval: str = "obs", level: float = LEVEL) -> pd.DataFrame:
        """predicted_ms, lo_ms, hi_ms for each row of `features` (index kept).

        Args:
            interval: `obs` for the prediction interval of a new cell median (the fit's scatter
                included), `mean` for the confidence interval of the mean alone.
        """
        if interval not in INTERVALS:
            raise ValueError(f"interval must be one of {', '.join(INTERVALS)}")
        exog = self.design(features)
        prediction = self.result.get_prediction(exog)
        mean, mean_se = prediction.predicted_mean, prediction.se_mean
        se = mean_se
        if interval == "obs":
            # A new cell scatters relatively, as the fit's weights say (weight 1 / mean^2), so its
            # variance is scale x mean^2 (statsmodels' own weights= path rejects some shapes).
            se = np.sqrt(mean_se**2 + self.result.scale * mean**2)
        from scipy import stats

        half = stats.t.ppf(0.5 + level / 2, self.result.df_resid) * se
        out = pd.DataFrame(
            {"predicted_ms": mean, "lo_ms": mean - half, "hi_ms": mean + half},
            index=features.index,
        )
        low = self.cells[list(self.features)].min()
        high = self.cells[list(self.features)].max()
        inside = features[list(self.features)].ge(low) & features[list(self.features)].le(high)
        out["extrapolated"] = ~inside.all(axis=1)
        return out

    def summary(self, level: float = LEVEL) -> dict[str, Any]:
        """Everything about the fit as plain values (the JSON output)."""
        return {
            "format": self.format,
            "mode": self.mode,
            "formula": f"planning_ms ~ 1 + {' + '.join(self.features)}",
            "n": self.n,
            "r2": self.r2,
            "r2_adjusted": float(self.result.rsquared_adj),
            "level": level,
            "coefficients": self.coefficients(level).to_dict(orient="records"),
            **self.diagnostics(),
            "datasets": sorted(map(str, self.cells["dataset"].unique())),
        }


def predict_by_regime(
    model: Fit, small: Fit | None, features: pd.DataFrame, interval: str = "obs"
) -> tuple[pd.DataFrame, pd.Series]:
    """`model.predict` for each row of `features`, but the rows of the many-small-manifests regime
    (`planning_cells.small_manifests`) predicted by `small` when it is given; and which rows those
    are. The doctor (`icelab.health.forecast.PlanningModel`) and `icelab costmodel`
    (`manifest_layouts.predict_table`) both predict through it."""
    out = model.predict(features, interval)
    if small is None:
        return out, pd.Series(False, index=features.index)
    use = small_manifests(features)
    if use.any():
        part = small.predict(features[use], interval)
        for column in part.columns:
            out.loc[use, column] = part[column]
    return out, use


def fit(
    frame: pd.DataFrame,
    format: str,
    features: Sequence[str] | None = None,
    states: pd.DataFrame | None = None,
    windows: pd.DataFrame | None = None,
    limit: float | None = None,
    notes: list[str] | None = None,
) -> dict[str, Fit]:
    """One weighted least-squares fit per planning mode of `format`, on the cell medians of
    `frame` (`cells`), each cell weighted 1 / planning_ms^2 (the module docstring says why).

    Args:
        frame: measurements in the contract's columns.
        format: `iceberg` or `parquet`.
        features: the regressors (default FEATURES[format]); e.g. add `manifest_bytes_read`.
        limit: fit only on datasets with at most this many data files.
        notes: where a mode that cannot be fitted (too few cells, a feature that never varies) is
            named; such a mode is left out.

    Raises:
        ValueError: when no mode of `format` can be fitted.
    """
    import statsmodels.api as sm

    names = tuple(features or FEATURES[format])
    table = cells(frame, states, windows)
    table = table[table["format"] == format]
    if limit is not None:
        table = table[table["data_files"] <= limit]
    fits: dict[str, Fit] = {}
    for mode, part in table.groupby("mode", sort=True):
        part = part.dropna(subset=[*names, "planning_ms"]).reset_index(drop=True)
        exog = sm.add_constant(part[list(names)].astype(float), has_constant="add")
        why = ""
        if len(part) < len(names) + 2:
            why = f"{len(part)} cells, too few for {len(names) + 1} coefficients"
        elif np.linalg.matrix_rank(exog.to_numpy()) < exog.shape[1]:
            why = "a feature never varies or is an exact mix of the others"
        if why:
            if notes is not None:
                notes.append(f"{format}/{mode} not fitted: {why}")
            continue
        fits[str(mode)] = fit_cells(part, format, str(mode), names)
    if not fits:
        where = f" with at most {limit:,.0f} data files" if limit is not None else ""
        raise ValueError(f"no {format} cells to fit{where}" + (f" ({'; '.join(notes)})" if notes else ""))
    return fits


def fit_cells(part: pd.DataFrame, format: str, mode: str, features: Sequence[str]) -> Fit:
    """The weighted least-squares fit of cells already formed (`cells`, one format and mode, no
    missing feature): what `fit` does per mode, and what a stored calibration refits from the
    cells it keeps."""
    import statsmodels.api as sm

    names = tuple(features)
    exog = sm.add_constant(part[list(names)].astype(float), has_constant="add")
    y = part["planning_ms"].astype(float)
    return Fit(format, mode, names, sm.WLS(y, exog, weights=1.0 / y**2).fit(), part)


def fit_all(
    frame: pd.DataFrame,
    features: Mapping[str, Sequence[str]] | None = None,
    states: pd.DataFrame | None = None,
    windows: pd.DataFrame | None = None,
    limit: float | None = None,
    notes: list[str] | None = None,
) -> dict[tuple[str, str], Fit]:
    """`fit` of every format the frame holds, keyed (format, mode).

    Raises:
        ValueError: when no format can be fitted.
    """
    notes = [] if notes is None else notes
    out: dict[tuple[str, str], Fit] = {}
    for fmt in (ICEBERG, PARQUET):
        if not (frame["format"] == fmt).any():
            continue
        before = len(notes)
        try:
            found = fit(frame, fmt, (features or {}).get(fmt), states, windows, limit, notes)
        except ValueError as exc:
            if len(notes) == before:  # no mode said why: say it for the format
                notes.append(str(exc))
            continue
        out |= {(fmt, mode): f for mode, f in found.items()}
    if not out:
        raise ValueError("nothing to fit: " + "; ".join(notes or ["no measured cells"]))
    return out


def predict_cells(
    table: pd.DataFrame, fits: Mapping[tuple[str, str], Fit], interval: str = "obs"
) -> pd.DataFrame:
    """`table` (cells) with the prediction of its (format, mode)'s fit and the relative error;
    cells without a fit are dropped."""
    parts = []
    for (fmt, mode), part in table.groupby(["format", "mode"], sort=True):
        model = fits.get((fmt, mode))
        if model is None:
            continue
        part = part.dropna(subset=list(model.features))
        if part.empty:
            continue
        parts.append(part.join(model.predict(part, interval)))
    if not parts:
        return pd.DataFrame(
            columns=[*table.columns, "predicted_ms", "lo_ms", "hi_ms", "extrapolated", "rel_error"]
        )
    out = pd.concat(parts)
    out["rel_error"] = (out["predicted_ms"] - out["planning_ms"]) / out["planning_ms"]
    return out.reset_index(drop=True)


def error_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per (format, mode, layout): cells, median and max absolute relative error."""
    if table.empty:
        return pd.DataFrame(
            columns=["format", "mode", "layout", "cells", "median_abs_error", "max_abs_error"]
        )
    grouped = table.assign(abs_error=table["rel_error"].abs()).groupby(
        ["format", "mode", "layout"], sort=True
    )
    return (
        grouped["abs_error"].agg(cells="size", median_abs_error="median", max_abs_error="max").reset_index()
    )


@dataclass
class Holdout:
    """A fit on the smaller datasets, checked on what it was not fitted on."""

    limit: float
    fits: dict[tuple[str, str], Fit]
    fitted: pd.DataFrame  # the fitted cells, predicted in-sample
    held_out: pd.DataFrame  # cells of datasets above the limit
    reference: pd.DataFrame  # cells of the real-data reference runs
    reference_runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summaries(self) -> dict[str, pd.DataFrame]:
        """The error summary of each checked set."""
        return {"held_out": error_summary(self.held_out), "reference": error_summary(self.reference)}


def holdout(
    frame: pd.DataFrame,
    states: pd.DataFrame | None = None,
    windows: pd.DataFrame | None = None,
    limit: float = LIMIT,
    reference: Sequence[pd.DataFrame] = (),
    features: Mapping[str, Sequence[str]] | None = None,
    interval: str = "obs",
) -> Holdout:
    """Fit on the datasets with at most `limit` data files; predict the larger ones and every cell
    of the `reference` runs (real data: their own scan metrics as features, setup null read as
    the default mode, see `modes`). Errors are as measured: nothing is tuned on them.

    Raises:
        ValueError: when nothing at or below the limit can be fitted.
    """
    notes: list[str] = []
    fits = fit_all(frame, features, states, windows, limit, notes)
    table = cells(frame, states, windows)
    fitted = predict_cells(table[table["data_files"] <= limit], fits, interval)
    held = predict_cells(table[table["data_files"] > limit], fits, interval)
    if reference:
        # Two reference runs can hold the same cell (manifest_8mb and manifest_sweep both measure
        # rewrite_8mb): each stays its own cell, named by its experiment.
        ref_cells = pd.concat(
            [cells(f).assign(experiment=_experiment(f)) for f in reference], ignore_index=True
        )
        missing = ref_cells[["format", "mode"]].drop_duplicates()
        for fmt, mode in missing.itertuples(index=False):
            if (fmt, mode) not in fits:
                notes.append(f"reference cells of {fmt}/{mode} not predicted: no such fit")
        ref = predict_cells(ref_cells, fits, interval)
    else:
        ref = predict_cells(table.iloc[0:0], fits, interval)
    return Holdout(limit, fits, fitted, held, ref, notes=notes)


def _experiment(frame: pd.DataFrame) -> str:
    names = frame["experiment"].dropna() if "experiment" in frame.columns else pd.Series(dtype=object)
    return str(names.iloc[0]) if not names.empty else "?"


SPREAD_KEYS = ["format", "mode", "dataset", "layout", "query_id", "window"]
# The same cell is also the same work: a rewrite cuts its manifests where it likes, so two runs'
# copies of one layout can read different manifests for a window; those are not compared.
SAME_WORK = ["manifests_read", "entries_read", "files_listed"]


def repeat_spread(runs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The same cell in separate runs of one dataset: per (format, mode, dataset, layout, query,
    window) that two or more runs measured reading the same manifests and entries (or files),
    the runs, their fastest and slowest median planning_ms, and spread = slowest / fastest - 1.
    No model can come nearer every run than the runs come to one another; this is the scatter a
    check against them carries.

    Args:
        runs: each run's measurements (as `measurements` reads them), by run id.
    """
    columns = [*SPREAD_KEYS, "runs", "fastest_ms", "slowest_ms", "spread"]
    keys = [*SPREAD_KEYS, *SAME_WORK]
    parts = [cells(frame)[[*keys, "planning_ms"]].assign(run_id=rid) for rid, frame in runs.items()]
    if not parts:
        return pd.DataFrame(columns=columns)
    every = pd.concat(parts, ignore_index=True)
    out = every.groupby(keys, sort=True, dropna=False).agg(
        runs=("run_id", "nunique"), fastest_ms=("planning_ms", "min"), slowest_ms=("planning_ms", "max")
    )
    out = out[out["runs"] >= 2].reset_index()
    return out.assign(spread=out["slowest_ms"] / out["fastest_ms"] - 1)[columns]


def spread_summary(spread: pd.DataFrame) -> pd.DataFrame:
    """Per (format, mode, dataset, layout): cells, most runs of a cell, median and max spread."""
    keys = ["format", "mode", "dataset", "layout"]
    if spread.empty:
        return pd.DataFrame(columns=[*keys, "cells", "runs", "median_spread", "max_spread"])
    grouped = spread.groupby(keys, sort=True)
    return grouped.agg(
        cells=("spread", "size"),
        runs=("runs", "max"),
        median_spread=("spread", "median"),
        max_spread=("spread", "max"),
    ).reset_index()
