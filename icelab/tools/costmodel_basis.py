"""What `icelab costmodel` predicts with, and the objects it computes before rendering: the
request as checked, the basis a prediction is fitted on (a calibration, else a stored run), the
model's error out of sample on runs it never saw, and the prediction and holdout-check results.
The command is icelab.tools.costmodel; rendering, icelab.tools.costmodel_output.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import blind_check
from icelab.analysis import calibration as calibrations
from icelab.analysis.calibration import Calibration, Where
from icelab.analysis.manifest_layouts import MANIFESTS_AS_INGESTED, measured_entry_bytes
from icelab.analysis.model_checks import OUT_OF_SAMPLE_COLUMNS, out_of_sample
from icelab.analysis.planning_cells import ICEBERG, cells
from icelab.analysis.planning_model import (
    Fit,
    Holdout,
    fit_all,
    holdout,
    predict_cells,
    repeat_spread,
    spread_summary,
)
from icelab.analysis.planning_runs import load, locate, measurements, newest_of, repeat_runs
from icelab.core.errors import UserError
from icelab.core.runs import Run


def _entry_bytes(given: float | None, states: pd.DataFrame | None) -> tuple[float, str]:
    if given is not None:
        return given, "given"
    return measured_entry_bytes(states)


@dataclass(frozen=True)
class Request:
    """What the command was asked, checked: a table to predict (None with --holdout) and the fit's options."""

    interval: str
    features: dict[str, tuple[str, ...]] | None
    limit: float
    files: int = 0
    days: int = 0
    windows: tuple[str, ...] = ()
    targets: tuple[int, ...] = ()
    manifests: int = MANIFESTS_AS_INGESTED
    threads: int | None = None  # None: the fitted run's driver cores
    mix: dict[str, float] | None = None  # None: equal weights
    manifests_given: bool = False
    where: Where = Where("local", "local")  # the engine and storage predicted for
    entry_bytes: float | None = None  # None: the fitted run's or calibration's


def run_facts(source: Run | Calibration) -> dict[str, Any]:
    """What the fitted run's env.json (or the calibration's copy of it) says of where it ran
    (empty values where it does not)."""
    if isinstance(source, Calibration):
        env = source.provenance
    else:
        try:
            env = source.env()
        except (ValueError, OSError):
            env = {}
    machine, storage = env.get("machine") or {}, env.get("storage") or {}
    return {
        "machine": {k: machine.get(k) for k in ("hostname", "cpu", "cores", "memory_gib")},
        "engine": (env.get("engine") or {}).get("name"),
        "storage": storage.get("kind"),
        "latency_ms": storage.get("latency_ms"),
        "commit": (env.get("git") or {}).get("commit"),
        "dirty": (env.get("git") or {}).get("dirty"),
    }


def origin(source: Run | Calibration) -> dict[str, Any]:
    """Where a prediction's absolute milliseconds come from: the calibration (or the run) fitted,
    when it was made (a run: when it started), its sitting and its machine.

    The sitting is the blind check's (icelab.analysis.blind_check.sitting): the run's
    `experiment.sitting` label, else its UTC date; `labelled` says which.
    """
    if isinstance(source, Calibration):
        fitted, verb, made = f"calibration {source.where}", "made", source.provenance.get("created_utc")
        label = source.provenance.get("sitting")
    else:
        fitted, verb, made = f"run {source.run_id}", "started", source.meta().get("started_utc")
        label = blind_check.sitting_label(source)
    return {
        "fitted": fitted,
        "made": verb,  # what made_utc is the time of: a calibration made, or a run started
        "made_utc": made,
        "sitting": str(label) if label else source.run_id[:8],
        "labelled": bool(label),
        "machine": run_facts(source)["machine"],
    }


@dataclass
class Prediction:
    """A table's predicted planning per layout and window, and the recommended rewrite target."""

    source: Run | Calibration
    request: Request
    mode: str
    fits: dict[tuple[str, str], Fit]
    entry_bytes: float
    entry_source: str
    threads: int
    table: pd.DataFrame
    recommendation: dict[str, Any]
    notes: list[str]
    measured: pd.DataFrame  # the fitted run's cells (the chart draws them)
    error: pd.DataFrame  # the interval's coverage and the error out of sample (`out_of_sample`)
    outside: str | None  # what of the table lies beyond the fitted states, if anything
    assumptions: dict[str, Any]


@dataclass
class Check:
    """The model fitted on the smaller datasets, checked on the larger ones, on the real-data
    reference runs, and beside the spread of the same cells across those runs."""

    source: Run
    request: Request
    reference: str
    runs: int  # complete reference runs found (the spread's)
    holdout: Holdout
    spread: pd.DataFrame


def check(source: Run, asked: Request, reference: str) -> Check:
    """Fit on `source` up to the limit; predict the rest and the newest reference runs.

    Raises:
        UserError: when nothing can be fitted.
    """
    frame, states, windows = load(source)
    try:
        # Each run read once: the newest are predicted, all of them give the spread.
        repeats = repeat_runs(Path(reference))
        frames = {r.run_id: measurements(r) for r in repeats}
        refs = newest_of(repeats)
        found = holdout(
            frame,
            states,
            windows,
            asked.limit,
            [frames[r.run_id] for r in refs],
            asked.features,
            asked.interval,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    found.reference_runs = [str(r.path) for r in refs]
    return Check(source, asked, reference, len(repeats), found, spread_summary(repeat_spread(frames)))


def measured_error(
    source: Run, asked: Request, mode: str, reference: str, notes: list[str]
) -> tuple[pd.DataFrame, float | None]:
    """The out-of-sample coverage and error of Iceberg's `mode` (`check` on `source` and the medium
    runs under `reference`), and the tie tolerance: the median absolute error of every such cell
    (None when no cell was predicted out of sample)."""
    try:
        found = check(source, asked, reference).holdout
    except UserError as exc:
        notes.append(f"coverage not measured: {exc}")
        return pd.DataFrame(columns=OUT_OF_SAMPLE_COLUMNS), None
    table = out_of_sample(found, ICEBERG, mode)
    pooled = table[table["set"] == "all"]
    return table, None if pooled.empty else float(pooled["median_abs_error"].iloc[0])


@dataclass
class Basis:
    """What a prediction is fitted on: a stored run, or a calibration made from one, and which
    calibration that is (or why none is used)."""

    source: Run | Calibration
    fits: dict[tuple[str, str], Fit]
    entry_bytes: float
    entry_source: str
    threads: int  # the fitted run's driver cores
    measured: pd.DataFrame  # the fitted cells (the chart draws them)
    calibration: str
    notes: list[str]


def run_basis(source: Run, asked: Request, calibration: str) -> Basis:
    """The fits of every format and mode on `source`.

    Raises:
        UserError: when nothing can be fitted.
    """
    frame, states, windows = load(source)
    notes: list[str] = []
    try:
        fits = fit_all(frame, asked.features, states, windows, notes=notes)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    per_entry, entry_source = _entry_bytes(asked.entry_bytes, states)
    threads = int(frame["planner_threads"].iloc[0])
    return Basis(
        source, fits, per_entry, entry_source, threads, cells(frame, states, windows), calibration, notes
    )


def calibration_basis(found: Calibration, entry_bytes: float | None) -> Basis:
    """The fits a calibration keeps (`entry_bytes`: as given, None: the calibration's)."""
    if entry_bytes is not None:
        per_entry, entry_source = entry_bytes, "given"
    else:
        per_entry, entry_source = (
            found.entry_bytes,
            found.entry_bytes_from.replace("fitted run", "calibration run"),
        )
    measured = pd.concat([f.cells for f in found.fits.values()], ignore_index=True)
    return Basis(
        found, dict(found.fits), per_entry, entry_source, found.threads, measured, found.describe(), []
    )


def basis(asked: Request, calibration: Path | None = None, results: str | None = None) -> Basis:
    """What to fit on: the calibration named (refused when measured on another engine or storage
    than asked), the run named, else the calibration of the engine and storage asked for under
    results/, else (saying so) the newest complete metadata_scale run.

    Raises:
        UserError: for a calibration that cannot be read or does not match, or nothing to fit.
    """
    if calibration is not None:
        try:
            found = calibrations.read(calibration)
            calibrations.check_match(found, asked.where)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return calibration_basis(found, asked.entry_bytes)
    if results is not None:
        source = locate(results)
        return run_basis(source, asked, f"none used: --results names the run to fit on ({source.run_id})")
    bases = [Path("results")]
    found = calibrations.matching(asked.where, bases)
    if found is not None:
        return calibration_basis(found, asked.entry_bytes)
    source = locate(None)
    none = (
        f"none matches {asked.where} (searched {calibrations.searched(bases)}): fitted on run "
        f"{source.run_id} instead, on the machine, engine and storage that run names"
    )
    return run_basis(source, asked, none)


def calibration_error(
    found: Calibration, asked: Request, mode: str, reference: str, notes: list[str]
) -> tuple[pd.DataFrame, float | None]:
    """The out-of-sample coverage and error of a calibration's Iceberg `mode`, on the newest
    real-data reference runs under `reference` measured on its engine and storage (none of them
    was fitted), and the tie tolerance (None when no such run was predicted)."""
    alike = []
    for r in repeat_runs(Path(reference)):
        try:
            if Where.of_env(r.env()) == found.where:
                alike.append(r)
        except ValueError:
            continue  # an older run that does not say where it ran
    runs = newest_of(alike)
    if not runs:
        notes.append(f"coverage not measured: no real-data reference run under {reference} on {found.where}")
        return pd.DataFrame(columns=OUT_OF_SAMPLE_COLUMNS), None
    try:
        table = pd.concat(
            [cells(measurements(r)).assign(experiment=r.experiment) for r in runs], ignore_index=True
        )
    except ValueError as exc:
        notes.append(f"coverage not measured: {exc}")
        return pd.DataFrame(columns=OUT_OF_SAMPLE_COLUMNS), None
    empty = pd.DataFrame()
    held = Holdout(asked.limit, found.fits, empty, empty, predict_cells(table, found.fits, asked.interval))
    held.reference_runs = [str(r.path) for r in runs]
    error = out_of_sample(held, ICEBERG, mode)
    pooled = error[error["set"] == "all"]
    return error, None if pooled.empty else float(pooled["median_abs_error"].iloc[0])
