"""`icelab costmodel`: fit the planning cost model (`icelab.analysis.planning_model`) on a stored
run, then predict planning for a table described by its size alone, or check the model on what
it was not fitted on; printed as text, and written as JSON with `--json`.

    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --targets 1MB,8MB,32MB
    python -m icelab.costmodel --files 5e6 --days 365 --mix 1d=0.6,30d=0.3,180d=0.1
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --json -   # JSON on stdout
    python -m icelab.costmodel --holdout            # fit on <= 1M files, predict 10M and the medium runs
    icelab costmodel calibrate --storage object --latency-ms 20   # calibrate (icelab.tools.calibrate)
    icelab costmodel ... --json costmodel.json --charts results/costmodel

It predicts with the calibration of the engine and storage asked for (`--engine`, `--storage`,
`--latency-ms`; default local and local) stored under results/calibrations, then
results/reference/calibrations (icelab.analysis.calibration; `icelab costmodel calibrate` makes
one), or the one `--calibration` names (refused when measured elsewhere); else, saying so, it is
fitted on the newest complete `metadata_scale` run (results/runs, then results/reference), or on
the run `--results` names. The recommendation minimises planning weighted by the query
mix (`--mix`, default equal weights); targets within the model's out-of-sample error of the best
are a tie, and each interval comes with the coverage it had on cells the fit never saw (the
fitted run's states above LIMIT files and the medium runs under `--reference`, predicted by the
same fit on the states up to LIMIT).

Exit status: 0, or 2 for bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from icelab.analysis import calibration as calibrations
from icelab.analysis.calibration import Calibration, Where
from icelab.analysis.manifest_layouts import (
    MANIFESTS_AS_INGESTED,
    TARGETS,
    equal_weights,
    measured_entry_bytes,
    outside_range,
    predict_table,
    recommend,
    window_days,
)
from icelab.analysis.model_checks import OUT_OF_SAMPLE_COLUMNS, out_of_sample
from icelab.analysis.planning_cells import (
    FEATURES,
    ICEBERG,
    ICEBERG_DEFAULT_MODE,
    PARQUET,
    cells,
)
from icelab.analysis.planning_model import (
    INTERVALS,
    LEVEL,
    LIMIT,
    Fit,
    Holdout,
    error_summary,
    fit_all,
    holdout,
    predict_cells,
    repeat_spread,
    spread_summary,
)
from icelab.analysis.planning_runs import load, locate, measurements, newest_of, repeat_runs
from icelab.core.config import parse_size
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.core.runs import Run
from icelab.core.units import pct

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


def mix_text(weights: Mapping[str, float]) -> str:
    """`1d 60%, 30d 30%, 180d 10%`."""
    return ", ".join(
        f"{w} {pct(share, 0 if round(share * 100, 6).is_integer() else 1)}" for w, share in weights.items()
    )


def recommendation_line(rec: dict[str, Any]) -> str:
    """`recommended: rewrite to 8MB manifests (...); as ingested: ...`."""
    weighted = rec.get("weighted_ms", rec["summed_ms"] / len(rec["windows"]))
    line = (
        f"recommended: rewrite to {rec['target']} manifests ({rec['manifests']:,} manifests of "
        f"{rec['entries_per_manifest']:,.0f} entries; predicted planning {_ms(weighted)} ms per query "
        f"weighted {mix_text(rec.get('weights') or equal_weights(rec['windows']))}, "
        f"{_ms(rec['summed_ms'])} ms summed over {', '.join(rec['windows'])})"
    )
    if rec["as_ingested_ms"] is not None:
        line += f"; as ingested: {_ms(rec['as_ingested_ms'])} ms summed"
        if rec.get("as_ingested_weighted_ms") is not None:
            line += f", {_ms(rec['as_ingested_weighted_ms'])} ms per query"
        line += f" ({rec['as_ingested_manifests']:,} manifests)"
    if rec.get("extrapolated"):
        line += " (the recommended layout reads beyond what the model was fitted on: an extrapolation)"
    return line


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def tie_line(rec: dict[str, Any], error: str) -> str:
    """Whether other targets tie with the recommended one within the model's error (`error` says
    which error)."""
    per = rec["per_target"]
    ranked = ", ".join(f"{t} {_ms(v)}" for t, v in sorted(per.items(), key=lambda kv: kv[1]))
    head = f"weighted planning per target (ms per query): {ranked}\n"
    if rec["tolerance"] is None:
        return head + "ties not judged: the model's out-of-sample error was not measured"
    if not rec["ties"]:
        return head + f"no tie: every other target is more than {error} above {rec['target']}"
    names = _and([rec["target"], *rec["ties"]])
    return head + f"tie: {names} are a tie within the model's error ({error}): pick by maintenance cost"


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


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2, like every bad input here."""

    def error(self, message: str) -> NoReturn:
        raise UserError(message)


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = OneLineParser(
        prog="icelab costmodel",
        description="Fit planning cost per manifest, entry, partition and file; predict a table's "
        "planning per layout and window (exit 2: bad input).",
    )
    p.add_argument("--files", help="the table's data files, e.g. 5e6")
    p.add_argument("--days", help="its days of daily partitions, e.g. 365")
    p.add_argument("--windows", help="the windows queried, comma-separated: 1h, 1d, 30d, full")
    p.add_argument(
        "--mix",
        help="the share of queries per window, summing to 1, e.g. 1d=0.6,30d=0.3,180d=0.1 "
        "(default: equal; --windows defaults to the mix's windows)",
    )
    p.add_argument("--manifests", help=f"manifests as ingested (default {MANIFESTS_AS_INGESTED})")
    p.add_argument("--entry-bytes", help="bytes per manifest entry (default: the run's states.csv, else 700)")
    p.add_argument("--targets", default=",".join(TARGETS), help="rewrite targets (default %(default)s)")
    p.add_argument("--mode", default=ICEBERG_DEFAULT_MODE, help="the Iceberg planning mode to predict with")
    p.add_argument(
        "--threads",
        help="planning threads: the driver's cores (local) or task slots (distributed); default: the "
        "fitted run's driver cores",
    )
    p.add_argument(
        "--results",
        help="the run to fit on (default: the calibration of --engine and --storage, else the newest "
        "complete metadata_scale run)",
    )
    p.add_argument("--engine", default="local", help="the engine to predict for (default %(default)s)")
    p.add_argument("--storage", default="local", help="the storage to predict for: local or object")
    p.add_argument(
        "--latency-ms", default="0", help="the round trip added to the store, in ms (default %(default)s)"
    )
    p.add_argument(
        "--calibration",
        type=Path,
        help="the calibration file to predict with; refused when measured on another engine or storage",
    )
    p.add_argument("--reference", default="results/reference", help="the real-data runs --holdout predicts")
    p.add_argument("--limit", default=str(LIMIT), help="--holdout fits on at most this many data files")
    p.add_argument(
        "--bytes", action="store_true", help="also fit on manifest_bytes_read (collinear with entries)"
    )
    p.add_argument(
        "--interval", choices=tuple(INTERVALS), default="obs", help="obs: prediction interval; mean: CI"
    )
    p.add_argument("--holdout", action="store_true", help="print the held-out and real-data checks instead")
    p.add_argument(
        "--json",
        type=Path,
        help="also write everything as JSON to this file (-: print it instead of the text)",
    )
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


def _mix(text: str | None, windows: Sequence[str]) -> dict[str, float] | None:
    """`1d=0.6,30d=0.4` as {window: share}, checked against `windows` (none given: the mix's)."""
    if text is None:
        return None
    mix: dict[str, float] = {}
    for item in _split(text, "mix"):
        name, eq, share = (part.strip() for part in item.partition("="))
        try:
            value = float(share) if eq else math.nan
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise UserError(f"bad --mix '{item}': use window=share, e.g. 1d=0.6, a share from 0 to 1")
        if name in mix:
            raise UserError(f"bad --mix: window '{name}' given twice")
        mix[name] = value
    if not math.isclose(sum(mix.values()), 1.0, abs_tol=1e-6):
        raise UserError(f"bad --mix '{text}': the shares sum to {sum(mix.values()):g}, not 1")
    for name in windows:
        if name not in mix:
            raise UserError(f"--windows names '{name}', which --mix gives no share (give it one)")
    for name in mix:
        if windows and name not in windows:
            raise UserError(f"--mix names '{name}', which is not in --windows")
    return mix


def _entry_bytes(given: str | None, states: pd.DataFrame | None) -> tuple[float, str]:
    if given is not None:
        return _positive(given, "entry-bytes"), "given"
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


def _run_facts(source: Run | Calibration) -> dict[str, Any]:
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


def request(args: argparse.Namespace) -> Request:
    """The arguments checked: the table first, so that a typo does not wait for a fit.

    Raises:
        UserError: for bad input.
    """
    features = {ICEBERG: (*FEATURES[ICEBERG], "manifest_bytes_read")} if args.bytes else None
    if args.holdout:
        return Request(args.interval, features, _positive(args.limit, "limit"))
    files = int(_positive(args.files, "files"))
    days = int(_positive(args.days, "days", whole=True))
    given = None if args.windows is None and args.mix is not None else _split(args.windows, "windows")
    mix = _mix(args.mix, given or [])
    names = tuple(dict.fromkeys(given or list(mix or ())))
    for name in names:
        try:
            window_days(name, days)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    try:
        targets = tuple(parse_size(t) for t in _split(args.targets, "targets"))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    manifests = (
        MANIFESTS_AS_INGESTED if args.manifests is None else int(_positive(args.manifests, "manifests", True))
    )
    threads = None if args.threads is None else int(_positive(args.threads, "threads", whole=True))
    limit = _positive(args.limit, "limit")
    if args.calibration is not None and args.results is not None:
        raise UserError("give --calibration or --results, not both: each names what the model is fitted on")
    try:
        where = Where.of(args.engine, args.storage, float(args.latency_ms))
    except ValueError:
        raise UserError(
            f"bad --latency-ms '{args.latency_ms}': use a number of milliseconds from 0"
        ) from None
    return Request(
        args.interval,
        features,
        limit,
        files,
        days,
        names,
        targets,
        manifests,
        threads,
        mix,
        args.manifests is not None,
        where,
    )


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


def run_basis(source: Run, asked: Request, entry_bytes: str | None, calibration: str) -> Basis:
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
    per_entry, entry_source = _entry_bytes(entry_bytes, states)
    threads = int(frame["planner_threads"].iloc[0])
    return Basis(
        source, fits, per_entry, entry_source, threads, cells(frame, states, windows), calibration, notes
    )


def calibration_basis(found: Calibration, entry_bytes: str | None) -> Basis:
    """The fits a calibration keeps."""
    if entry_bytes is not None:
        per_entry, entry_source = _positive(entry_bytes, "entry-bytes"), "given"
    else:
        per_entry, entry_source = (
            found.entry_bytes,
            found.entry_bytes_from.replace("fitted run", "calibration run"),
        )
    measured = pd.concat([f.cells for f in found.fits.values()], ignore_index=True)
    return Basis(
        found, dict(found.fits), per_entry, entry_source, found.threads, measured, found.describe(), []
    )


def basis(args: argparse.Namespace, asked: Request) -> Basis:
    """What to fit on: the calibration named (refused when measured on another engine or storage
    than asked), the run named, else the calibration of the engine and storage asked for under
    results/, else (saying so) the newest complete metadata_scale run.

    Raises:
        UserError: for a calibration that cannot be read or does not match, or nothing to fit.
    """
    if args.calibration is not None:
        try:
            found = calibrations.read(args.calibration)
            calibrations.check_match(found, asked.where)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        return calibration_basis(found, args.entry_bytes)
    if args.results is not None:
        source = locate(args.results)
        return run_basis(
            source, asked, args.entry_bytes, f"none used: --results names the run to fit on ({source.run_id})"
        )
    bases = [Path("results")]
    found = calibrations.matching(asked.where, bases)
    if found is not None:
        return calibration_basis(found, args.entry_bytes)
    source = locate(None)
    none = (
        f"none matches {asked.where} (searched {calibrations.searched(bases)}): fitted on run "
        f"{source.run_id} instead, on the machine, engine and storage that run names"
    )
    return run_basis(source, asked, args.entry_bytes, none)


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


def predict(found: Basis, asked: Request, mode: str, reference: str = "results/reference") -> Prediction:
    """Predict the asked table with `found`'s fits in Iceberg's `mode` and every Parquet mode;
    weigh the windows by the mix and judge ties by the model's out-of-sample error.

    Raises:
        UserError: when there is no fit of `mode`.
    """
    iceberg = {m: f for (fmt, m), f in found.fits.items() if fmt == ICEBERG}
    if mode not in iceberg:
        have = ", ".join(iceberg) or "none"
        raise UserError(f"no Iceberg fit for mode '{mode}' in {found.source.path} (fitted: {have})")
    parquet = {m: f for (fmt, m), f in found.fits.items() if fmt == PARQUET}
    threads = asked.threads or found.threads
    notes = list(found.notes)
    if isinstance(found.source, Calibration):
        error, tolerance = calibration_error(found.source, asked, mode, reference, notes)
    else:
        error, tolerance = measured_error(found.source, asked, mode, reference, notes)
    table = predict_table(
        asked.files,
        asked.days,
        list(asked.windows),
        found.entry_bytes,
        iceberg[mode],
        asked.targets,
        asked.manifests,
        parquet,
        asked.interval,
        threads,
    )
    return Prediction(
        found.source,
        asked,
        mode,
        found.fits,
        found.entry_bytes,
        found.entry_source,
        threads,
        table,
        recommend(table, asked.mix or equal_weights(asked.windows), tolerance),
        notes,
        found.measured,
        error,
        outside_range(table, asked.files, iceberg[mode]),
        assumptions(found, asked, mode, threads, iceberg[mode]),
    )


def assumptions(found: Basis, asked: Request, mode: str, threads: int, model: Fit) -> dict[str, Any]:
    """Every figure the prediction takes as given, and where each came from."""
    fitted = "the calibration's" if isinstance(found.source, Calibration) else "the fitted run's"
    return {
        **_run_facts(found.source),
        "asked": {
            "engine": asked.where.engine,
            "storage": asked.where.storage,
            "latency_ms": asked.where.latency_ms,
        },
        "calibration": found.calibration,
        "facts_from": fitted,
        "mode": mode,
        "threads": threads,
        "threads_from": "given" if asked.threads else f"{fitted} driver cores",
        "entry_bytes": found.entry_bytes,
        "entry_bytes_from": found.entry_source,
        "manifests_as_ingested": asked.manifests,
        "manifests_from": "given"
        if asked.manifests_given
        else "icelab's default, the manifests its 1M-entry state had as ingested, whatever the table's size",
        "queries": sorted(map(str, model.cells["query_id"].dropna().unique())),
        "weights": asked.mix or equal_weights(asked.windows),
        "weights_from": "the --mix given" if asked.mix else "equal weights: no --mix given",
    }


def _heading(source: Run | Calibration) -> list[str]:
    if isinstance(source, Calibration):
        head = f"costmodel: {source.describe()}, experiment {source.experiment}"
    else:
        head = f"costmodel: fitted on {source.path} (run {source.run_id}, experiment {source.experiment})"
    return [
        head,
        "  least squares weighted 1/planning_ms^2 (relative error) on the median planning_ms of each "
        "(dataset, layout, mode, query, window) cell over its measured repetitions (no warm-ups, status ok)",
    ]


def check_text(result: Check) -> str:
    """The console view of a holdout check."""
    found, limit = result.holdout, result.request.limit
    runs = ", ".join(found.reference_runs) or "none found"
    spread = (
        result.spread.to_string(index=False, formatters=_SPREAD_FORMAT)
        if not result.spread.empty
        else "no cell measured twice"
    )
    lines = [
        *_heading(result.source),
        f"  fitted on datasets with at most {limit:,.0f} data files\n",
        coefficient_report(found.fits),
        "\n" + checked_report(found.held_out, f"held out (more than {limit:,.0f} data files)"),
        "\n" + checked_report(found.reference, f"real-data reference runs ({runs})"),
        f"\nthe same cells in separate runs ({result.runs} complete runs under {result.reference}): "
        "spread = slowest run's median / fastest run's - 1\n" + spread,
        *(f"note: {note}" for note in found.notes),
    ]
    return "\n".join(lines)


def error_text(rec: dict[str, Any], mode: str) -> str:
    """Which error the ties are judged by."""
    return f"median absolute out-of-sample error {pct(rec['tolerance'], 1)}, Iceberg {mode}"


def coverage_line(error: pd.DataFrame, interval: str, limit: float, calibrated: bool = False) -> str:
    """The interval's coverage as measured on cells the fit never saw, or that it was not."""
    sets = error[error["set"] != "all"]
    if sets.empty:
        return f"  coverage not measured: no cell was predicted out of sample ({INTERVALS[interval]})"
    found = "; ".join(f"{pct(r.coverage)} of {r.cells:,} cells of {r.what}" for r in sets.itertuples())
    fit = (
        "the calibration's fit" if calibrated else f"the same fit on the states up to {limit:,.0f} data files"
    )
    return f"  coverage of the {LEVEL:.0%} interval, measured out of sample ({fit}): {found}"


def assumptions_text(given: dict[str, Any]) -> str:
    """The short block of everything the prediction assumes."""
    m = given["machine"]
    commit = (given["commit"] or "?")[:7] + (" (dirty)" if given["dirty"] else "")
    latency = "" if given["latency_ms"] is None else f", latency {given['latency_ms']} ms"
    lines = [
        f"machine: {m['hostname']}, {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB "
        f"({given['facts_from']})",
        f"engine and storage: {given['engine']}, {given['storage']}{latency}; commit {commit} (asked for "
        f"{Where.of(**given['asked'])})",
        f"calibration: {given['calibration']}",
        f"planning threads: {given['threads']} ({given['threads_from']}); Iceberg mode {given['mode']}",
        f"entry bytes: {given['entry_bytes']:,.0f} ({given['entry_bytes_from']})",
        f"manifests as ingested: {given['manifests_as_ingested']:,} ({given['manifests_from']})",
        f"query: {', '.join(given['queries'])} (the fitted run's; other queries are not modelled)",
        f"windows: {mix_text(given['weights'])} ({given['weights_from']})",
    ]
    return "assumptions:\n" + "\n".join(f"  {line}" for line in lines)


def prediction_text(result: Prediction) -> str:
    """The console view of a table's prediction."""
    asked = result.request
    files, days = asked.files, asked.days
    rec = result.recommendation
    lines = [
        *_heading(result.source),
        "\n" + coefficient_report(result.fits),
        f"\ntable: {files:,} data files over {days:,} days ({files / days:,.0f} per day), "
        f"entries of {result.entry_bytes:,.0f} bytes ({result.entry_source}), Iceberg mode {result.mode} on "
        f"{result.threads} planning threads"
        + (f" ({result.assumptions['facts_from']})" if asked.threads is None else ""),
        *([f"outside the fitted range: {result.outside}"] if result.outside else []),
        prediction_report(result.table, asked.windows, asked.interval),
        coverage_line(result.error, asked.interval, asked.limit, isinstance(result.source, Calibration)),
        "\n" + assumptions_text(result.assumptions),
        "\n" + recommendation_line(rec),
        tie_line(rec, error_text(rec, result.mode) if rec["tolerance"] is not None else ""),
        *parquet_lines(result.table, asked.interval),
        *(f"note: {note}" for note in result.notes),
    ]
    return "\n".join(lines)


def _run_json(result: Check | Prediction) -> dict[str, Any]:
    source = result.source
    calibrated = isinstance(source, Calibration)
    return {
        "run": {
            "path": source.provenance.get("run_path") if calibrated else str(source.path),
            "run_id": source.run_id,
            "experiment": source.experiment,
        },
        "calibration": {
            "path": str(source.path),
            "engine": source.where.engine,
            "storage": source.where.storage,
            "latency_ms": source.where.latency_ms,
            "commit": (source.provenance.get("git") or {}).get("commit"),
        }
        if calibrated
        else None,
        "interval": INTERVALS[result.request.interval],
        "level": LEVEL,
    }


def check_json(result: Check) -> dict[str, Any]:
    """What --json writes for a holdout check."""
    found = result.holdout
    return _run_json(result) | {
        "limit": result.request.limit,
        "fits": [f.summary() for f in found.fits.values()],
        "held_out": _records(found.held_out),
        "reference_runs": found.reference_runs,
        "reference": _records(found.reference),
        "summary": {k: _records(v) for k, v in found.summaries().items()},
        "repeat_spread": _records(result.spread),
        "notes": found.notes,
    }


def prediction_json(result: Prediction) -> dict[str, Any]:
    """What --json writes for a table's prediction."""
    asked = result.request
    return _run_json(result) | {
        "fits": [f.summary() for f in result.fits.values()],
        "table": {
            "files": asked.files,
            "days": asked.days,
            "windows": list(asked.windows),
            "entry_bytes": result.entry_bytes,
            "manifests": asked.manifests,
            "threads": result.threads,
            "mix": result.recommendation["weights"],
        },
        "outside_fitted_range": result.outside,
        "assumptions": result.assumptions,
        "coverage": _records(result.error),
        "predictions": _records(result.table),
        "recommendation": result.recommendation,
        "tie": [result.recommendation["target"], *result.recommendation["ties"]]
        if result.recommendation["ties"]
        else [],
        "notes": result.notes,
    }


def draw(result: Check | Prediction, into: Path) -> list[Path]:
    """The charts of a result (PNG and SVG) in `into`."""
    # Imported here: matplotlib is only loaded when a chart is asked for.
    from icelab.charts.costmodel import planning_vs_files, scatter_chart

    if isinstance(result, Prediction):
        return planning_vs_files(result.measured, result.source.path, into / "planning_vs_files.png")
    found = result.holdout
    points = pd.concat(
        [
            found.fitted.assign(kind="fitted"),
            found.held_out.assign(kind="held out"),
            found.reference.assign(kind="reference"),
        ],
        ignore_index=True,
    )
    return scatter_chart(points, result.source.path, into / "costmodel_scatter.png")


def run(args: argparse.Namespace, out: Any = None) -> dict[str, Any]:
    """Do what the arguments ask: compute the result, print it to `out`; return what --json writes.

    Raises:
        UserError: for bad input or nothing to fit.
    """
    out = out or sys.stdout  # looked up per call: a caller (or a test) may have replaced it
    asked = request(args)
    if args.charts:
        args.charts.mkdir(parents=True, exist_ok=True)
    result: Check | Prediction
    if args.holdout:
        if args.calibration is not None:
            raise UserError("--holdout checks a fit on a run's states: give --results, not --calibration")
        result = check(locate(args.results), asked, args.reference)
        text, data = check_text(result), check_json(result)
    else:
        result = predict(basis(args, asked), asked, args.mode, args.reference)
        text, data = prediction_text(result), prediction_json(result)
    if _to_stdout(args):
        text = json.dumps(data, indent=2, default=str)
    print(text, file=out)
    if args.charts:
        print("\n" + "\n".join(map(str, draw(result, args.charts))), file=out)
    return data


def _to_stdout(args: argparse.Namespace) -> bool:
    return args.json is not None and str(args.json) == "-"


def main(argv: Sequence[str] | None = None) -> int:
    """Fit, then predict or check (`calibrate`: make a calibration, icelab.tools.calibrate); 0, or
    2 after one line on stderr for bad input."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["calibrate"]:
        # Imported here: only this verb starts a benchmark.
        from icelab.tools.calibrate import main as calibrate

        return calibrate(argv[1:])
    try:
        args = parser().parse_args(argv)
        data = run(args)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json and not _to_stdout(args):
        write_json(args.json, data)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
