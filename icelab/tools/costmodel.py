"""`icelab costmodel`: fit the planning cost model (`icelab.analysis.planning_model`) on a stored
run, then predict planning for a table described by its size alone, or check the model on what
it was not fitted on; printed as text, and written as JSON with `--json`.

    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --targets 1MB,8MB,32MB
    python -m icelab.costmodel --holdout            # fit on <= 1M files, predict 10M and the medium runs
    icelab costmodel ... --json costmodel.json --charts results/costmodel

It is fitted on the newest complete `metadata_scale` run (results/runs, then results/reference)
unless `--results` names another run.

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

from icelab.analysis.manifest_layouts import (
    MANIFESTS_AS_INGESTED,
    TARGETS,
    measured_entry_bytes,
    predict_table,
    recommend,
    window_days,
)
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
    repeat_spread,
    spread_summary,
)
from icelab.analysis.planning_runs import load, locate, measurements, newest_of, repeat_runs
from icelab.core.config import parse_size
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.core.runs import Run

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


@dataclass
class Prediction:
    """A table's predicted planning per layout and window, and the recommended rewrite target."""

    source: Run
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
    names = tuple(dict.fromkeys(_split(args.windows, "windows")))
    for name in names:
        try:
            window_days(name, days)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    try:
        targets = tuple(parse_size(t) for t in _split(args.targets, "targets"))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    manifests = int(_positive(args.manifests, "manifests", whole=True))
    threads = None if args.threads is None else int(_positive(args.threads, "threads", whole=True))
    limit = _positive(args.limit, "limit")
    return Request(args.interval, features, limit, files, days, names, targets, manifests, threads)


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


def predict(source: Run, asked: Request, mode: str, entry_bytes: str | None) -> Prediction:
    """Fit on `source`; predict the asked table in Iceberg's `mode` and every Parquet mode.

    Raises:
        UserError: when nothing can be fitted, or there is no fit of `mode`.
    """
    frame, states, windows = load(source)
    notes: list[str] = []
    try:
        fits = fit_all(frame, asked.features, states, windows, notes=notes)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    iceberg = {m: f for (fmt, m), f in fits.items() if fmt == ICEBERG}
    if mode not in iceberg:
        have = ", ".join(iceberg) or "none"
        raise UserError(f"no Iceberg fit for mode '{mode}' in {source.path} (fitted: {have})")
    parquet = {m: f for (fmt, m), f in fits.items() if fmt == PARQUET}
    per_entry, entry_source = _entry_bytes(entry_bytes, states)
    threads = asked.threads or int(frame["planner_threads"].iloc[0])
    table = predict_table(
        asked.files,
        asked.days,
        list(asked.windows),
        per_entry,
        iceberg[mode],
        asked.targets,
        asked.manifests,
        parquet,
        asked.interval,
        threads,
    )
    return Prediction(
        source,
        asked,
        mode,
        fits,
        per_entry,
        entry_source,
        threads,
        table,
        recommend(table),
        notes,
        cells(frame, states, windows),
    )


def _heading(source: Run) -> list[str]:
    return [
        f"costmodel: fitted on {source.path} (run {source.run_id}, experiment {source.experiment})",
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


def prediction_text(result: Prediction) -> str:
    """The console view of a table's prediction."""
    asked = result.request
    files, days = asked.files, asked.days
    lines = [
        *_heading(result.source),
        "\n" + coefficient_report(result.fits),
        f"\ntable: {files:,} data files over {days:,} days ({files / days:,.0f} per day), "
        f"entries of {result.entry_bytes:,.0f} bytes ({result.entry_source}), Iceberg mode {result.mode} on "
        f"{result.threads} planning threads" + (" (the fitted run's)" if asked.threads is None else ""),
        prediction_report(result.table, asked.windows, asked.interval),
        "\n" + recommendation_line(result.recommendation),
        *parquet_lines(result.table, asked.interval),
        *(f"note: {note}" for note in result.notes),
    ]
    return "\n".join(lines)


def _run_json(result: Check | Prediction) -> dict[str, Any]:
    source = result.source
    return {
        "run": {"path": str(source.path), "run_id": source.run_id, "experiment": source.experiment},
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
        },
        "predictions": _records(result.table),
        "recommendation": result.recommendation,
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
    source = locate(args.results)
    result: Check | Prediction
    if args.holdout:
        result = check(source, asked, args.reference)
        text, data = check_text(result), check_json(result)
    else:
        result = predict(source, asked, args.mode, args.entry_bytes)
        text, data = prediction_text(result), prediction_json(result)
    print(text, file=out)
    if args.charts:
        print("\n" + "\n".join(map(str, draw(result, args.charts))), file=out)
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
