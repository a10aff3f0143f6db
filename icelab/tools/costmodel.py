"""`icelab costmodel`: fit the planning cost model (`icelab.analysis.planning_model`) on a stored
run, then predict planning for a table described by its size alone, or check the model on what
it was not fitted on; printed as text, and written as JSON with `--json`.

    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --targets 1MB,8MB,32MB
    python -m icelab.costmodel --files 5e6 --days 365 --mix 1d=0.6,30d=0.3,180d=0.1
    python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d --json -   # JSON on stdout
    python -m icelab.costmodel --holdout            # fit on <= 1M files, predict 10M and the medium runs
    icelab costmodel calibrate --storage object --latency-ms 20   # calibrate (icelab.tools.calibrate)
    icelab costmodel blind          # score the pre-registered blind check (icelab.tools.blind_check)
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

What it computes with and the result objects: icelab.tools.costmodel_basis; their text and JSON:
icelab.tools.costmodel_output.

Exit status: 0, or 2 for bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis.calibration import Calibration, Where, stale_note
from icelab.analysis.manifest_layouts import (
    MANIFESTS_AS_INGESTED,
    TARGETS,
    equal_weights,
    outside_range,
    predict_table,
    recommend,
    window_days,
)
from icelab.analysis.planning_cells import FEATURES, ICEBERG, ICEBERG_DEFAULT_MODE, PARQUET, regime_mode
from icelab.analysis.planning_model import INTERVALS, LIMIT, Fit
from icelab.analysis.planning_runs import locate
from icelab.core.config import parse_size
from icelab.core.errors import OneLineParser, UserError
from icelab.core.results import write_json
from icelab.tools.costmodel_basis import (
    Basis,
    Check,
    Prediction,
    Request,
    basis,
    calibration_error,
    check,
    measured_error,
    run_facts,
)
from icelab.tools.costmodel_output import check_json, check_text, prediction_json, prediction_text


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
    entry_bytes = None if args.entry_bytes is None else _positive(args.entry_bytes, "entry-bytes")
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
        entry_bytes,
    )


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
        stale = stale_note(found.source.provenance.get("created_utc"))
        if stale:
            notes.append(stale)
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
        small=iceberg.get(regime_mode(mode)),
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
        **run_facts(found.source),
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
        "small_manifests_fit": (
            f"{len(small.cells)} cells of many small manifests: it predicts the windows of that regime"
            if (small := found.fits.get((ICEBERG, regime_mode(mode)))) is not None
            else "none: every window by the fit over every cell"
        ),
        "queries": sorted(map(str, model.cells["query_id"].dropna().unique())),
        "weights": asked.mix or equal_weights(asked.windows),
        "weights_from": "the --mix given" if asked.mix else "equal weights: no --mix given",
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
        result = predict(basis(asked, args.calibration, args.results), asked, args.mode, args.reference)
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
    """Fit, then predict or check (`calibrate`: make a calibration, icelab.tools.calibrate;
    `blind`: score the blind check, icelab.tools.blind_check); 0, or 2 after one line on stderr
    for bad input."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["calibrate"]:
        # Imported here: only this verb starts a benchmark.
        from icelab.tools.calibrate import main as calibrate

        return calibrate(argv[1:])
    if argv[:1] == ["blind"]:
        from icelab.tools.blind_check import main as blind

        return blind(argv[1:])
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
