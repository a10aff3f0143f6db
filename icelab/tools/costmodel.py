"""A planning cost model: what query planning costs per manifest and per entry read (Iceberg) or
per partition and per file listed (Parquet), fitted on stored measurements, checked on table sizes
it was not fitted on, and used to predict planning for a table described by its size alone.

    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --targets 1MB,8MB,32MB
    python -m icelab.costmodel --holdout            # fit on <= 1M files, predict 10M and the medium runs
    icelab costmodel ... --json costmodel.json --charts results/costmodel

The fit is weighted least squares on the median planning_ms of each (dataset, layout, mode,
query, window) cell over its measured repetitions (warm-ups and failed rows are never used):
Iceberg `planning_ms ~ 1 + manifests_read + busiest_thread_entries + entries_matched`, Parquet
`planning_ms ~ 1 + partitions_listed + files_listed`, one fit per planning mode.

Iceberg reads manifests in parallel, one manifest to a thread (the driver's worker pool in local
planning, `iceberg.worker.num-threads`, by default the driver's cores; Spark's task slots in
distributed planning), never one manifest on two threads. So the entries that set the time are
those of the busiest thread: `busiest_thread_entries = max(entries_read / threads, entries of the
largest manifest read)`. A window on many small manifests spreads over every thread; a window that
falls in one large rewritten manifest waits for one thread (a thread dump of the 10M state's 1h
plan, docs/metadata-scale.md). `threads` is the driver's cores from the run's env.json. Each cell weighs
1 / planning_ms^2, so the fit minimises relative error: the question is "within x% of the
measured", and the noise of a planning time grows with it (a 10 ms cell and a 100 s cell are
equally informative about the per-entry cost, an unweighted fit listens to the 100 s cell alone).
It is fitted on the newest complete `metadata_scale` run (results/runs, then results/reference)
unless `--results` names another run.

Exit status: 0, or 2 for bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.outliers_influence import variance_inflation_factor

from icelab.analysis.rows import counted
from icelab.core.config import parse_size, window_length
from icelab.core.contract import MEASUREMENTS, read_measurements
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.core.runs import Run, find_run, find_runs, latest_runs, load_run

ICEBERG, PARQUET = "iceberg", "parquet"
EXPERIMENT = "metadata_scale"
REFERENCE_EXPERIMENTS = ("manifest_8mb", "manifest_sweep")
FEATURES: dict[str, tuple[str, ...]] = {
    # Bytes read is left out by default: entries have about constant size, so bytes and entries are
    # nearly collinear and their two coefficients could not be told apart (the VIF shows it).
    # entries_matched (files_scanned): the entries that pass the filter become scan tasks (and, in
    # distributed planning, travel to the driver); a wide window on the same manifests costs more.
    ICEBERG: ("manifests_read", "busiest_thread_entries", "entries_matched"),
    PARQUET: ("partitions_listed", "files_listed"),
}
OPTIONAL_FEATURES = ("manifest_bytes_read",)
# How each coefficient is shown: its unit, and the factor from the fitted ms per one.
UNITS: dict[str, tuple[str, float]] = {
    "const": ("fixed ms", 1.0),
    "manifests_read": ("ms per manifest", 1.0),
    "entries_read": ("ms per 1,000 entries", 1e3),
    "busiest_thread_entries": ("ms per 1,000 entries on the busiest thread", 1e3),
    "entries_matched": ("ms per 1,000 entries matched", 1e3),
    "manifest_bytes_read": ("ms per MB of manifests", 1e6),
    "partitions_listed": ("ms per partition", 1.0),
    "files_listed": ("ms per 1,000 files", 1e3),
}
# Runs that record no planning mode (setup null) planned with Iceberg's default (local, on one
# driver) and Spark's default listing: serial up to the threshold of paths, a Spark job above it
# (spark.sql.sources.parallelPartitionDiscovery.threshold, pinned at 32 in conf/engine/_common.yaml).
ICEBERG_DEFAULT_MODE = "local"
PARQUET_SERIAL, PARQUET_PARALLEL = "listing_serial", "listing_parallel"
PARALLEL_THRESHOLD = 32
LIMIT = 1_000_000
AS_INGESTED = "as_ingested"
MANIFESTS_AS_INGESTED = 379  # 1M entries as ingested in the metadata spike (DESIGN.md)
ENTRY_BYTES = 700.0  # 673 B metadata-only, about 710 B on real data (DESIGN.md)
TARGETS = ("1MB", "2MB", "4MB", "8MB", "16MB", "32MB", "64MB", "128MB")
LEVEL = 0.95
INTERVALS = {"obs": "prediction interval of a new cell median", "mean": "confidence interval of the mean"}
CELL_KEYS = ["format", "mode", "dataset", "layout", "query_id", "window"]


def measured(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a fit may use: measured rounds (no warm-ups) that succeeded and scanned something."""
    rows = counted(frame)
    if "scan_nodes" in rows.columns:
        rows = rows[rows["scan_nodes"].isna() | (rows["scan_nodes"] != 0)]  # 0: answered from metadata
    return rows


def _numeric(frame: pd.DataFrame, column: str) -> pd.Series:
    """A column as numbers (nulls as NaN); all NaN when the frame lacks it."""
    if column not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(frame[column], errors="coerce").astype(float)


def modes(frame: pd.DataFrame) -> pd.Series:
    """The planning mode of each row: its `setup`, or the default the run planned with when it
    recorded none (module constants ICEBERG_DEFAULT_MODE and PARALLEL_THRESHOLD)."""
    setup = frame["setup"] if "setup" in frame.columns else pd.Series(None, index=frame.index, dtype=object)
    partitions = _numeric(frame, "partitions_scanned")
    listing = np.where(partitions > PARALLEL_THRESHOLD, PARQUET_PARALLEL, PARQUET_SERIAL)
    default = np.where(frame["format"] == PARQUET, listing, ICEBERG_DEFAULT_MODE)
    return setup.where(setup.notna(), pd.Series(default, index=frame.index))


def cells(
    frame: pd.DataFrame, states: pd.DataFrame | None = None, windows: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per (format, mode, dataset, layout, query, window): the median planning_ms over the
    measured repetitions (`n` of them) and the median of each feature.

    Iceberg features come from the scan's own metrics (manifests_scanned; entries read =
    files_scanned + files_skipped; entries matched = files_scanned); where a row lacks them, and
    for manifest_bytes_read, from `windows` (windows.csv, computed from the manifest list).
    busiest_thread_entries = max(entries_read / planner_threads, largest_manifest_entries): the
    largest manifest read from `windows` when it records it, else from the layout (`largest_read`).
    Parquet: partitions_listed = partitions_scanned, files_listed = files_scanned. `data_files`
    comes from `states` (states.csv), else from the most entries (Iceberg) or files (Parquet) any
    cell of the dataset read.
    """
    rows = measured(frame)
    rows = rows.assign(
        mode=modes(rows),
        layout=np.where(rows["format"] == PARQUET, PARQUET, rows["profile"].astype(str)),
        manifests_read=_numeric(rows, "manifests_scanned"),
        entries_read=_numeric(rows, "files_scanned") + _numeric(rows, "files_skipped"),
        entries_matched=_numeric(rows, "files_scanned"),
        partitions_listed=_numeric(rows, "partitions_scanned"),
        files_listed=_numeric(rows, "files_scanned"),
        planner_threads=_numeric(rows, "planner_threads"),
    )
    if rows["planner_threads"].isna().any():
        raise ValueError("rows without planner_threads (the driver's cores): read a run with `measurements`")
    numeric = [
        "planning_ms",
        "window_hours",
        "manifests_read",
        "entries_read",
        "entries_matched",
        "partitions_listed",
        "files_listed",
        "planner_threads",
    ]
    out = rows.groupby(CELL_KEYS, dropna=False, sort=True)[numeric].median()
    out["n"] = rows.groupby(CELL_KEYS, dropna=False, sort=True).size()
    out = out.reset_index()
    iceberg = out["format"] == ICEBERG
    out.loc[iceberg, ["partitions_listed", "files_listed"]] = np.nan
    out.loc[~iceberg, ["manifests_read", "entries_read", "entries_matched"]] = np.nan
    out["manifest_bytes_read"] = np.nan
    out["largest_manifest_entries"] = np.nan
    if windows is not None and not windows.empty:
        keyed = windows.rename(columns={"profile": "layout"}).set_index(["dataset", "layout", "window"])
        at = pd.MultiIndex.from_frame(out[["dataset", "layout", "window"]])
        for column in ("manifests_read", "entries_read", "manifest_bytes_read", "largest_manifest_entries"):
            if column in keyed.columns:
                listed = pd.Series(keyed[column].reindex(at).to_numpy(float), index=out.index)
                out.loc[iceberg, column] = out.loc[iceberg, column].fillna(listed[iceberg])
    out["largest_manifest_entries"] = out["largest_manifest_entries"].fillna(largest_read(out))
    out["busiest_thread_entries"] = np.maximum(
        out["entries_read"] / out["planner_threads"], out["largest_manifest_entries"]
    )
    out["data_files"] = data_files(out, states)
    order = ["format", "mode", "data_files", "dataset", "layout", "query_id", "window_hours"]
    return out.sort_values(order, kind="stable").reset_index(drop=True)


def largest_read(table: pd.DataFrame) -> pd.Series:
    """The entries of the largest manifest each Iceberg cell reads, from its layout, for runs whose
    windows.csv does not record it: a `rewrite_<size>` layout cuts a manifest every size / bytes
    per entry entries (bytes per entry from manifest_bytes_read, else ENTRY_BYTES), so a window
    reads at most that many in one manifest; other layouts (as ingested: manifests of one size)
    the mean, entries_read / manifests_read."""
    target = table["layout"].map(_target_bytes)
    per_entry = (table["manifest_bytes_read"] / table["entries_read"]).fillna(ENTRY_BYTES)
    cut = np.minimum(table["entries_read"], np.floor(target / per_entry))
    return cut.fillna(table["entries_read"] / table["manifests_read"])


def _target_bytes(layout: Any) -> float:
    """`rewrite_64mb` -> 67108864.0; NaN for a layout that is not a rewrite to a size."""
    text = str(layout)
    if not text.startswith("rewrite_"):
        return math.nan
    try:
        return float(parse_size(text.removeprefix("rewrite_")))
    except ValueError:
        return math.nan


def data_files(table: pd.DataFrame, states: pd.DataFrame | None = None) -> pd.Series:
    """The data files of each cell's dataset: from states.csv when it names the dataset, else the
    most entries (or files, for Parquet) a cell of that dataset read."""
    seen = table["entries_read"].fillna(table["files_listed"]).groupby(table["dataset"]).transform("max")
    if states is None or states.empty:
        return seen
    known = states.groupby("dataset")["data_files"].max()
    return table["dataset"].map(known).fillna(seen)


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
        y = part["planning_ms"].astype(float)
        result = sm.WLS(y, exog, weights=1.0 / y**2).fit()
        fits[str(mode)] = Fit(format, str(mode), names, result, part)
    if not fits:
        where = f" with at most {limit:,.0f} data files" if limit is not None else ""
        raise ValueError(f"no {format} cells to fit{where}" + (f" ({'; '.join(notes)})" if notes else ""))
    return fits


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


def _predicted(table: pd.DataFrame, fits: Mapping[tuple[str, str], Fit], interval: str) -> pd.DataFrame:
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
    fitted = _predicted(table[table["data_files"] <= limit], fits, interval)
    held = _predicted(table[table["data_files"] > limit], fits, interval)
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
        ref = _predicted(ref_cells, fits, interval)
    else:
        ref = _predicted(table.iloc[0:0], fits, interval)
    return Holdout(limit, fits, fitted, held, ref, notes=notes)


def _experiment(frame: pd.DataFrame) -> str:
    names = frame["experiment"].dropna() if "experiment" in frame.columns else pd.Series(dtype=object)
    return str(names.iloc[0]) if not names.empty else "?"


# --- A table described by its size: the layouts it could have and what a window reads ---


@dataclass(frozen=True)
class Layout:
    """The manifests of a table of `files` entries over `days` daily partitions."""

    name: str  # as_ingested, rewrite_8mb, ...
    files: int
    days: int
    manifests: int
    entries_per_manifest: float
    target_bytes: int | None = None  # None: as ingested
    spans_every_day: bool = False

    @property
    def files_per_day(self) -> float:
        return self.files / self.days

    @property
    def manifests_per_day(self) -> float:
        """Manifests that hold a given day's entries: all of them as ingested; after a rewrite,
        files per day over entries per manifest (below 1: one manifest spans several days)."""
        return (
            float(self.manifests) if self.spans_every_day else self.files_per_day / self.entries_per_manifest
        )

    def read(self, window_days: int) -> tuple[int, int]:
        """(manifests, entries) a window of `window_days` whole days reads.

        As ingested every manifest spans every day, so all are read. After a rewrite the entries
        lie sorted by day, `entries_per_manifest` to a manifest: a window covers w x files-per-day
        entries, plus one manifest for the boundary it straddles. That is ceil(w x files per day /
        entries per manifest) + 1 whether a manifest holds less than a day or several days (then
        the same as ceil(w / days per manifest) + 1), never more than all.
        """
        if self.spans_every_day or window_days >= self.days:
            return self.manifests, self.files
        share = window_days * self.files / self.days / self.entries_per_manifest
        manifests = min(self.manifests, math.ceil(share - 1e-9) + 1)  # 1e-9: float noise on exact multiples
        return manifests, int(min(self.files, manifests * self.entries_per_manifest))


def ingested_layout(files: int, days: int, manifests: int = MANIFESTS_AS_INGESTED) -> Layout:
    """As ingested: `manifests` manifests, each with entries of every day (one per commit)."""
    return Layout(AS_INGESTED, files, days, manifests, files / manifests, None, spans_every_day=True)


def rewrite_layout(files: int, days: int, entry_bytes: float, target: int | str) -> Layout:
    """After `rewrite_manifests` with `commit.manifest.target-size-bytes` = target: entries sorted
    by day, cut every floor(target / entry_bytes) entries."""
    target_bytes = parse_size(target) if isinstance(target, str) else int(target)
    per = max(1, math.floor(target_bytes / entry_bytes))
    return Layout(
        f"rewrite_{size_label(target_bytes).lower()}", files, days, math.ceil(files / per), per, target_bytes
    )


def size_label(size: int) -> str:
    """8388608 -> `8MB`, 262144 -> `256KB` (binary units, as parse_size reads them)."""
    for unit, factor in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def window_days(name: str, days: int) -> int:
    """The daily partitions a window reads: `1h` reads its day (partitions are daily), `36h` two,
    `7d` seven, `full` or anything longer than the table every day.

    Raises:
        ValueError: for a window name that is not `<n>h`, `<n>d` or `full`.
    """
    length = window_length(name)
    if length is None:
        return days
    return min(days, max(1, math.ceil(length.total_seconds() / 86400)))


def window_share(name: str, days: int) -> float:
    """The share of a table of `days` days a window covers (`1h`: 1/24 of a day): the entries
    whose bounds it matches, for entries that each hold about a day's slice of rows."""
    length = window_length(name)
    if length is None:
        return 1.0
    return min(1.0, length.total_seconds() / 86400 / days)


def predict_table(
    files: int,
    days: int,
    windows: Sequence[str],
    entry_bytes: float,
    model: Fit,
    targets: Iterable[int | str] = TARGETS,
    manifests: int = MANIFESTS_AS_INGESTED,
    parquet: Mapping[str, Fit] | None = None,
    interval: str = "obs",
    threads: int = 1,
) -> pd.DataFrame:
    """Predicted planning of a table of `files` data files over `days` daily partitions for each
    window: Iceberg as ingested (`manifests` manifests) and rewritten at each target size with
    `model` on `threads` planning threads (the busiest one's entries: `cells`), Parquet with each
    fit of `parquet` (partitions = window days, files = days x files per day).

    One row per (layout, window): format, mode, layout, target_bytes, manifests,
    entries_per_manifest, manifests_per_day, window, window_days, the features read and
    predicted_ms, lo_ms, hi_ms (`interval`), extrapolated (a feature outside the fitted range).
    """
    layouts = [ingested_layout(files, days, manifests)]
    layouts += [rewrite_layout(files, days, entry_bytes, t) for t in targets]
    rows = []
    for lay in layouts:
        for name in windows:
            wd = window_days(name, days)
            read, entries = lay.read(wd)
            matched = min(entries, files * window_share(name, days))
            largest = min(entries, lay.entries_per_manifest)
            rows.append(
                {
                    "format": ICEBERG,
                    "mode": model.mode,
                    "layout": lay.name,
                    "target_bytes": lay.target_bytes,
                    "manifests": lay.manifests,
                    "entries_per_manifest": lay.entries_per_manifest,
                    "manifests_per_day": lay.manifests_per_day,
                    "window": name,
                    "window_days": wd,
                    "manifests_read": read,
                    "entries_read": entries,
                    "entries_matched": matched,
                    "largest_manifest_entries": largest,
                    "busiest_thread_entries": max(entries / threads, largest),
                    "manifest_bytes_read": entries * entry_bytes,
                }
            )
    table = pd.DataFrame(rows)
    parts = [table.join(model.predict(table, interval))]
    for mode, listing in (parquet or {}).items():
        wds = [window_days(name, days) for name in windows]
        lists = pd.DataFrame(
            {
                "format": PARQUET,
                "mode": mode,
                "layout": PARQUET,
                "window": list(windows),
                "window_days": wds,
                "partitions_listed": wds,
                "files_listed": [wd * files / days for wd in wds],
            }
        )
        parts.append(lists.join(listing.predict(lists, interval)))
    return pd.concat(parts, ignore_index=True)


def recommend(table: pd.DataFrame) -> dict[str, Any]:
    """The rewrite target whose predicted planning summed over the windows is least, and the same
    sum as ingested.

    Raises:
        ValueError: when the table has no rewrite layout.
    """
    iceberg = table[table["format"] == ICEBERG]
    sums = iceberg.groupby("layout", sort=False)["predicted_ms"].sum()
    rewrites = iceberg[iceberg["target_bytes"].notna()]
    if rewrites.empty:
        raise ValueError("no rewrite target to recommend")
    best = str(sums[list(dict.fromkeys(rewrites["layout"]))].idxmin())
    row = rewrites[rewrites["layout"] == best].iloc[0]
    ingested = iceberg[iceberg["layout"] == AS_INGESTED]
    return {
        "layout": best,
        "target": size_label(int(row["target_bytes"])),
        "target_bytes": int(row["target_bytes"]),
        "manifests": int(row["manifests"]),
        "entries_per_manifest": float(row["entries_per_manifest"]),
        "summed_ms": float(sums[best]),
        "as_ingested_ms": float(sums[AS_INGESTED]) if not ingested.empty else None,
        "as_ingested_manifests": int(ingested["manifests"].iloc[0]) if not ingested.empty else None,
        "windows": list(dict.fromkeys(iceberg["window"])),
        "extrapolated": bool(
            iceberg.loc[iceberg["layout"] == best].get("extrapolated", pd.Series(False)).any()
        ),
    }


# --- Stored runs ---


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
        complete = [r for r in map(load_run, sorted((root / EXPERIMENT).glob("*"))) if r and r.complete]
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


def _with_measurements(run: Run) -> Run:
    if not (run.path / MEASUREMENTS).is_file():
        raise UserError(f"{run.path} has no {MEASUREMENTS}")
    return run


def load(run: Run) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame | None]:
    """A run's measurements (`measurements`), and its states.csv and windows.csv when it has them."""
    extra = [run.path / name for name in ("states.csv", "windows.csv")]
    states, windows = (pd.read_csv(p) if p.is_file() else None for p in extra)
    return measurements(run), states, windows


def measurements(run: Run) -> pd.DataFrame:
    """A run's measurements with `planner_threads`, the cores of the machine its driver ran on
    (env.json: machine.cores), the threads Iceberg's worker pool and local[*] had.

    Raises:
        UserError: when the run's env.json does not say.
    """
    try:
        cores = run.env().get("machine", {}).get("cores")
    except (ValueError, AttributeError):  # env.json unreadable, or not shaped as icelab writes it
        cores = None
    if not isinstance(cores, int) or cores < 1:
        raise UserError(f"{run.path / 'env.json'} does not say the driver's cores (machine.cores)")
    return read_measurements(run.path).assign(planner_threads=cores)


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


# --- Console and JSON ---


_SPREAD_FORMAT = {"median_spread": "{:.1%}".format, "max_spread": "{:.1%}".format}


def _ms(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def _interval(r: Any) -> str:
    mark = "*" if getattr(r, "extrapolated", False) else ""
    return f"{_ms(r.predicted_ms)} [{_ms(r.lo_ms)}, {_ms(r.hi_ms)}]{mark}"


def coefficient_report(fits: Mapping[tuple[str, str], Fit], level: float = LEVEL) -> str:
    """The coefficient table, then one line of fit and collinearity figures per fit."""
    rows, lines = [], []
    for (fmt, mode), model in fits.items():
        for c in model.coefficients(level).itertuples():
            rows.append(
                {
                    "format": fmt,
                    "mode": mode,
                    "coefficient": c.unit,
                    "estimate": f"{c.estimate:,.3f}",
                    f"{level:.0%} CI": f"[{c.ci_low:,.3f}, {c.ci_high:,.3f}]",
                }
            )
        d = model.diagnostics()
        vif = ", ".join(f"{k} {v:,.1f}" for k, v in d["vif"].items())
        lines.append(
            f"  {fmt}/{mode}: n = {model.n} cells, R² = {model.r2:.3f}, condition number "
            f"{d['condition_number']:,.1f} (columns scaled to unit length), VIF {vif}"
        )
    return pd.DataFrame(rows).to_string(index=False) + "\n" + "\n".join(lines)


def prediction_report(table: pd.DataFrame, windows: Sequence[str], interval: str) -> str:
    """Per layout: manifests, manifests per day, then per window the manifests read and the
    predicted planning ms with its interval."""
    rows = []
    for (fmt, mode, layout), part in table.groupby(["format", "mode", "layout"], sort=False):
        by = part.set_index("window")
        first = part.iloc[0]
        row: dict[str, Any] = {"layout": layout if fmt == ICEBERG else f"parquet ({mode})"}
        row["manifests"] = f"{int(first['manifests']):,}" if fmt == ICEBERG else "-"
        row["per day"] = f"{first['manifests_per_day']:,.2f}" if fmt == ICEBERG else "-"
        for w in windows:
            r = by.loc[w]
            read = r["manifests_read"] if fmt == ICEBERG else r["partitions_listed"]
            row[f"{w} read"] = f"{int(read):,}" + ("" if fmt == ICEBERG else " dirs")
            row[f"{w} ms"] = _interval(r)
        rows.append(row)
    note = (
        f"  ms: predicted planning [95% {INTERVALS[interval]}]; * beyond the fitted range of a feature; "
        "per day: manifests holding one day's entries; read: manifests read (Parquet: directories listed)"
    )
    return pd.DataFrame(rows).to_string(index=False) + "\n" + note


def recommendation_line(rec: dict[str, Any]) -> str:
    """`recommended: rewrite to 8MB manifests (...); as ingested: ...`."""
    windows = ", ".join(rec["windows"])
    line = (
        f"recommended: rewrite to {rec['target']} manifests ({rec['manifests']:,} manifests of "
        f"{rec['entries_per_manifest']:,.0f} entries; summed predicted planning {_ms(rec['summed_ms'])} ms "
        f"over {windows})"
    )
    if rec["as_ingested_ms"] is not None:
        line += f"; as ingested: {_ms(rec['as_ingested_ms'])} ms ({rec['as_ingested_manifests']:,} manifests)"
    if rec.get("extrapolated"):
        line += " (the recommended layout reads beyond what the model was fitted on: an extrapolation)"
    return line


def parquet_lines(table: pd.DataFrame, interval: str) -> list[str]:
    """Parquet's predicted planning per listing mode and window."""
    lines = []
    for mode, part in table[table["format"] == PARQUET].groupby("mode", sort=False):
        figures = ", ".join(f"{r.window} {_interval(r)} ms" for r in part.itertuples())
        lines.append(f"parquet ({mode}): {figures}; summed {_ms(part['predicted_ms'].sum())} ms")
    return lines


def checked_report(table: pd.DataFrame, what: str) -> str:
    """Measured against predicted per cell, then the error summary per layout."""
    if table.empty:
        return f"{what}: no cells"
    view = table.assign(
        data_files=table["data_files"].map(lambda v: f"{v:,.0f}"),
        measured=table["planning_ms"].map(_ms),
        predicted=[_interval(r) for r in table.itertuples()],
        error=table["rel_error"].map(lambda v: f"{v:+.1%}"),
    )
    columns = ["format", "mode", "dataset", "data_files", "layout", "query_id", "window", "n", "measured"]
    if "experiment" in table.columns:
        columns.insert(0, "experiment")
    summary = error_summary(table).assign(
        median_abs_error=lambda f: f["median_abs_error"].map(lambda v: f"{v:.1%}"),
        max_abs_error=lambda f: f["max_abs_error"].map(lambda v: f"{v:.1%}"),
    )
    return (
        f"{what}:\n"
        + view[[*columns, "predicted", "error"]].to_string(index=False)
        + "\n\nabsolute relative error per layout:\n"
        + summary.to_string(index=False)
    )


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(frame.to_json(orient="records"))


# --- Command line ---


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2, like every bad input here."""

    def error(self, message: str) -> NoReturn:
        raise UserError(message)


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = _Parser(
        prog="icelab costmodel",
        description="Fit planning cost per manifest, entry, partition and file; predict a table's "
        "planning per layout and window (exit 2: bad input).",
    )
    p.add_argument("--files", help="the table's data files, e.g. 5e6")
    p.add_argument("--days", help="its days of daily partitions, e.g. 365")
    p.add_argument("--windows", help="the windows queried, comma-separated: 1h, 1d, 30d, full")
    p.add_argument(
        "--manifests", default=str(MANIFESTS_AS_INGESTED), help="manifests as ingested (default %(default)s)"
    )
    p.add_argument("--entry-bytes", help="bytes per manifest entry (default: the run's states.csv, else 700)")
    p.add_argument("--targets", default=",".join(TARGETS), help="rewrite targets (default %(default)s)")
    p.add_argument("--mode", default=ICEBERG_DEFAULT_MODE, help="the Iceberg planning mode to predict with")
    p.add_argument(
        "--threads",
        help="planning threads: the driver's cores (local) or task slots (distributed); default: the "
        "fitted run's driver cores",
    )
    p.add_argument("--results", help="the run to fit on (default: newest complete metadata_scale run)")
    p.add_argument("--reference", default="results/reference", help="the real-data runs --holdout predicts")
    p.add_argument("--limit", default=str(LIMIT), help="--holdout fits on at most this many data files")
    p.add_argument(
        "--bytes", action="store_true", help="also fit on manifest_bytes_read (collinear with entries)"
    )
    p.add_argument(
        "--interval", choices=tuple(INTERVALS), default="obs", help="obs: prediction interval; mean: CI"
    )
    p.add_argument("--holdout", action="store_true", help="print the held-out and real-data checks instead")
    p.add_argument("--json", type=Path, help="also write everything as JSON to this file")
    p.add_argument("--charts", type=Path, help="also draw the charts (PNG and SVG) into this directory")
    return p


def _positive(text: str | None, what: str, whole: bool = False) -> float:
    if text is None:
        raise UserError(f"--{what} is required (or give --holdout)")
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"bad --{what} '{text}': use a positive number") from None
    if not math.isfinite(value) or value <= 0 or (whole and value != int(value)):
        raise UserError(f"bad --{what} '{text}': use a positive {'whole ' if whole else ''}number")
    return value


def _split(text: str | None, what: str) -> list[str]:
    items = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not items:
        raise UserError(f"--{what} is required (or give --holdout)")
    return items


def _entry_bytes(given: str | None, states: pd.DataFrame | None) -> tuple[float, str]:
    if given is not None:
        return _positive(given, "entry-bytes"), "given"
    if states is not None and "entry_bytes" in states.columns:
        # As ingested first: its manifests are large, so their fixed overhead (header, schema) hardly
        # adds to the bytes per entry; small rewritten manifests inflate it.
        iceberg = states[states["format"] == ICEBERG]
        for rows, what in ((iceberg[iceberg["profile"] == AS_INGESTED], "as ingested"), (iceberg, "all")):
            found = rows["entry_bytes"].dropna()
            if not found.empty:
                return float(found.median()), f"median of the fitted run's states.csv, {what}"
    return ENTRY_BYTES, "default"


def run(args: argparse.Namespace, out: Any = None) -> dict[str, Any]:
    """Do what the arguments ask; print to `out`; return what --json writes.

    Raises:
        UserError: for bad input or nothing to fit.
    """
    out = out or sys.stdout  # looked up per call: a caller (or a test) may have replaced it
    features = {ICEBERG: (*FEATURES[ICEBERG], "manifest_bytes_read")} if args.bytes else None
    if not args.holdout:  # check the table first: a typo should not wait for a fit
        files = int(_positive(args.files, "files"))
        days = int(_positive(args.days, "days", whole=True))
        names = list(dict.fromkeys(_split(args.windows, "windows")))
        for name in names:
            try:
                window_days(name, days)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        try:
            targets = [parse_size(t) for t in _split(args.targets, "targets")]
        except ValueError as exc:
            raise UserError(str(exc)) from None
        manifests = int(_positive(args.manifests, "manifests", whole=True))
        given_threads = None if args.threads is None else int(_positive(args.threads, "threads", whole=True))
    limit = _positive(args.limit, "limit")
    if args.charts:
        args.charts.mkdir(parents=True, exist_ok=True)
    source = locate(args.results)
    frame, states, windows = load(source)
    print(
        f"costmodel: fitted on {source.path} (run {source.run_id}, experiment {source.experiment})", file=out
    )
    print(
        "  least squares weighted 1/planning_ms^2 (relative error) on the median planning_ms of each "
        "(dataset, layout, mode, query, window) cell over its measured repetitions (no warm-ups, status ok)",
        file=out,
    )
    data: dict[str, Any] = {
        "run": {"path": str(source.path), "run_id": source.run_id, "experiment": source.experiment},
        "interval": INTERVALS[args.interval],
        "level": LEVEL,
    }
    notes: list[str] = []
    if args.holdout:
        try:
            # Each run read once: the newest are predicted, all of them give the spread.
            repeats = repeat_runs(Path(args.reference))
            frames = {r.run_id: measurements(r) for r in repeats}
            refs = newest_of(repeats)
            check = holdout(
                frame,
                states,
                windows,
                limit,
                [frames[r.run_id] for r in refs],
                features,
                args.interval,
            )
        except ValueError as exc:
            raise UserError(str(exc)) from None
        check.reference_runs = [str(r.path) for r in refs]
        print(f"  fitted on datasets with at most {limit:,.0f} data files\n", file=out)
        print(coefficient_report(check.fits), file=out)
        print(
            "\n" + checked_report(check.held_out, f"held out (more than {limit:,.0f} data files)"), file=out
        )
        runs = ", ".join(check.reference_runs) or "none found"
        print("\n" + checked_report(check.reference, f"real-data reference runs ({runs})"), file=out)
        spread = spread_summary(repeat_spread(frames))
        print(
            f"\nthe same cells in separate runs ({len(repeats)} complete runs under {args.reference}): "
            "spread = slowest run's median / fastest run's - 1\n"
            + (
                spread.to_string(index=False, formatters=_SPREAD_FORMAT)
                if not spread.empty
                else "no cell measured twice"
            ),
            file=out,
        )
        for note in check.notes:
            print(f"note: {note}", file=out)
        data |= {
            "limit": limit,
            "fits": [f.summary() for f in check.fits.values()],
            "held_out": _records(check.held_out),
            "reference_runs": check.reference_runs,
            "reference": _records(check.reference),
            "summary": {k: _records(v) for k, v in check.summaries().items()},
            "repeat_spread": _records(spread),
            "notes": check.notes,
        }
        if args.charts:
            # Imported here: matplotlib is only loaded when a chart is asked for.
            from icelab.charts.costmodel import scatter_chart

            points = pd.concat(
                [
                    check.fitted.assign(kind="fitted"),
                    check.held_out.assign(kind="held out"),
                    check.reference.assign(kind="reference"),
                ],
                ignore_index=True,
            )
            paths = scatter_chart(points, source.path, args.charts / "costmodel_scatter.png")
            print("\n" + "\n".join(map(str, paths)), file=out)
        return data
    try:
        fits = fit_all(frame, features, states, windows, notes=notes)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    iceberg = {mode: f for (fmt, mode), f in fits.items() if fmt == ICEBERG}
    if args.mode not in iceberg:
        have = ", ".join(iceberg) or "none"
        raise UserError(f"no Iceberg fit for mode '{args.mode}' in {source.path} (fitted: {have})")
    parquet = {mode: f for (fmt, mode), f in fits.items() if fmt == PARQUET}
    entry_bytes, entry_source = _entry_bytes(args.entry_bytes, states)
    threads = given_threads or int(frame["planner_threads"].iloc[0])
    table = predict_table(
        files,
        days,
        names,
        entry_bytes,
        iceberg[args.mode],
        targets,
        manifests,
        parquet,
        args.interval,
        threads,
    )
    rec = recommend(table)
    print("\n" + coefficient_report(fits), file=out)
    print(
        f"\ntable: {files:,} data files over {days:,} days ({files / days:,.0f} per day), "
        f"entries of {entry_bytes:,.0f} bytes ({entry_source}), Iceberg mode {args.mode} on "
        f"{threads} planning threads" + (" (the fitted run's)" if given_threads is None else ""),
        file=out,
    )
    print(prediction_report(table, names, args.interval), file=out)
    print("\n" + recommendation_line(rec), file=out)
    for line in parquet_lines(table, args.interval):
        print(line, file=out)
    for note in notes:
        print(f"note: {note}", file=out)
    data |= {
        "fits": [f.summary() for f in fits.values()],
        "table": {
            "files": files,
            "days": days,
            "windows": names,
            "entry_bytes": entry_bytes,
            "manifests": manifests,
            "threads": threads,
        },
        "predictions": _records(table),
        "recommendation": rec,
        "notes": notes,
    }
    if args.charts:
        from icelab.charts.costmodel import planning_vs_files

        measured_cells = cells(frame, states, windows)
        paths = planning_vs_files(measured_cells, source.path, args.charts / "planning_vs_files.png")
        print("\n" + "\n".join(map(str, paths)), file=out)
    return data


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, then predict or check; 0, or 2 after one line on stderr for bad input."""
    try:
        args = parser().parse_args(argv)
        data = run(args)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        write_json(args.json, data)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
