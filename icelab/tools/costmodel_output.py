"""`icelab costmodel`'s results rendered: the console text and the JSON of a prediction and of a
holdout check (icelab.tools.costmodel_basis computes them)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from icelab.analysis.calibration import Calibration, Where
from icelab.analysis.manifest_layouts import equal_weights
from icelab.analysis.planning_cells import ICEBERG, PARQUET, SMALL_MANIFESTS
from icelab.analysis.planning_model import INTERVALS, LEVEL, Fit, error_summary
from icelab.core.runs import Run
from icelab.core.units import pct
from icelab.tools.costmodel_basis import Check, Prediction, origin

_SPREAD_FORMAT = {"median_spread": "{:.1%}".format, "max_spread": "{:.1%}".format}


def _ms(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def interval_text(r: Any) -> str:
    """A prediction and its interval, in ms; * marks one outside the fitted range."""
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
            small = r.get("fit") == SMALL_MANIFESTS
            row[f"{w} ms"] = interval_text(r) + (" s" if small else "")
        rows.append(row)
    note = (
        f"  ms: predicted planning [95% {INTERVALS[interval]}]; * beyond the fitted range of a feature; "
        "s: by the fit on many small manifests; "
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
        figures = ", ".join(f"{r.window} {interval_text(r)} ms" for r in part.itertuples())
        lines.append(f"parquet ({mode}): {figures}; summed {_ms(part['predicted_ms'].sum())} ms")
    return lines


def checked_report(table: pd.DataFrame, what: str) -> str:
    """Measured against predicted per cell, then the error summary per layout."""
    if table.empty:
        return f"{what}: no cells"
    view = table.assign(
        data_files=table["data_files"].map(lambda v: f"{v:,.0f}"),
        measured=table["planning_ms"].map(_ms),
        predicted=[interval_text(r) for r in table.itertuples()],
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
        f"fit on many small manifests: {given.get('small_manifests_fit', 'none')}",
        f"manifests as ingested: {given['manifests_as_ingested']:,} ({given['manifests_from']})",
        f"query: {', '.join(given['queries'])} (the fitted run's; other queries are not modelled)",
        f"windows: {mix_text(given['weights'])} ({given['weights_from']})",
    ]
    return "assumptions:\n" + "\n".join(f"  {line}" for line in lines)


def origin_line(found: dict[str, Any]) -> str:
    """Beside the absolute milliseconds: the calibration (or run) they come from, when it was made,
    in which sitting and on which machine (`costmodel_basis.origin`)."""
    made = found["made_utc"]
    when = f"{found['made']} {str(made)[:16]} UTC" if made else f"{found['made']} at a time not recorded"
    sitting = found["sitting"] + ("" if found["labelled"] else " (its run's UTC date: no sitting label)")
    m = found["machine"]
    machine = f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB (host {m['hostname']})"
    return (
        f"  ms are absolute, from {found['fitted']} {when} in sitting {sitting} on {machine}: "
        "another machine, or this one in another sitting, plans at its own speed"
    )


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
        origin_line(origin(result.source)),
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
        "origin": origin(result.source),
        "assumptions": result.assumptions,
        "coverage": _records(result.error),
        "predictions": _records(result.table),
        "recommendation": result.recommendation,
        "tie": [result.recommendation["target"], *result.recommendation["ties"]]
        if result.recommendation["ties"]
        else [],
        "notes": result.notes,
    }
