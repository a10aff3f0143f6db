"""docs/metadata-scale.md's generated blocks: the metadata-scale states, planning at each size,
window and mode, the anchors, and the planning cost model fitted on them, all read from the
reference `metadata_scale` run (and the medium reference runs the model is checked on)."""

from __future__ import annotations

import datetime as dt
import io
import itertools
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis import planning_model, planning_runs
from icelab.analysis.effect_intervals import MIN_VALUES
from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.charts.costmodel import ANCHORS
from icelab.core.runs import Run, find_runs, latest_runs
from icelab.core.units import num, pct, ratio, size
from icelab.tools import costmodel
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.sources import provenance, reference_run

EXPERIMENT = "metadata_scale"
# results/reference/<this>: a metadata_scale run of the states the model is fitted on and the
# medium reference runs it predicts, measured back to back (one sitting), apart from the main set.
SITTING = "costmodel-sitting"
# Consecutive runs further apart than this are not one sitting.
SITTING_GAP = dt.timedelta(hours=1)
# How close a prediction must come to the measured planning to count as a good one.
BAR = 0.25
# What Iceberg wrote for the real medium dataset, the entry size the states must come near.
MEDIUM_RUN = "manifest_8mb"


def _run(results: Path) -> Run:
    return reference_run(results, EXPERIMENT)


def _frames(run: Run) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    data = stored(run)
    return data.measurements(), data.table("states.csv"), data.table("windows.csv")


def _states(run: Run) -> dict[str, dict]:
    return run.meta()["states"]


def medium_entry_bytes(results: Path) -> tuple[float, str]:
    """Bytes per manifest entry Iceberg wrote for the real medium dataset: the as-ingested
    manifests' bytes over the entries a full scan of them reads (reference manifest_8mb run)."""
    run = reference_run(results, MEDIUM_RUN)
    state = run.meta()["variants"]["iceberg/as_ingested"]
    m = stored(run).measurements()
    ice = m[(m["variant"] == "iceberg/as_ingested") & (m["status"] == "ok")]
    entries = int((ice["files_scanned"] + ice["files_skipped"]).max())
    return state["manifest_bytes"] / entries, run.run_id


def states_table(results: Path) -> str:
    """Per state and layout: entries, manifests, bytes, bytes per entry against the real medium
    dataset's, days each as-ingested manifest spans, snapshots, build time and disk."""
    run = _run(results)
    medium, medium_run = medium_entry_bytes(results)
    rows = []
    for label, info in _states(run).items():
        spans = pd.Series(info["as_ingested_days_per_manifest"]) / info["days"]
        for name, built in info["layouts"].items():
            per_entry = built["manifest_bytes"] / built["entries"]
            rows.append(
                [
                    f"`{label}`",
                    name,
                    num(built["entries"]),
                    num(built["manifests"]),
                    size(built["manifest_bytes"], label=False),
                    f"{per_entry:.0f} ({per_entry / medium - 1:+.0%})",
                    f"{pct(spans.min())} to {pct(spans.max())}" if name == "as_ingested" else "-",
                    num(built["commits"]),
                    f"{num(built['wall_s'] / 60, 1)} ({num(built['entries'] / built['seconds'])})",
                ]
            )
        rows.append(
            [
                f"`{label}`",
                "whole state",
                num(info["data_files"]),
                "-",
                "-",
                "-",
                "-",
                f"Parquet placeholders: {num(info['parquet_files'])}",
                f"{num(info['build_wall_s'] / 60, 1)} ({size(info['disk_bytes'], 'GB', 2)} on disk)",
            ]
        )
    head = [
        "state",
        "layout",
        "entries",
        "manifests",
        "manifest MB",
        f"bytes per entry (vs medium's {medium:.0f})",
        "days per as-ingested manifest",
        "commits",
        "build min (entries written per s)",
    ]
    return render(
        "metadata/states.md.j2", provenance=provenance(run), medium_run=medium_run, table=table(head, rows)
    )


def _cells(measurements: pd.DataFrame) -> pd.DataFrame:
    ok = counted(measurements)
    return (
        ok.groupby(
            ["dataset", "format", "profile", "setup", "variant", "window", "window_hours"], dropna=False
        )
        .agg(
            planning_ms=("planning_ms", "median"),
            n=("planning_ms", "size"),
            manifests_scanned=("manifests_scanned", "median"),
            manifests_total=("manifests_total", "median"),
            entries=("files_skipped", "median"),
            files=("files_scanned", "median"),
            partitions=("partitions_scanned", "median"),
        )
        .reset_index()
        .assign(entries=lambda d: d["entries"] + d["files"])
    )


def counts_table(results: Path) -> str:
    """The layouts' deterministic counts: manifests a 1-day window reads, as ingested and at the
    1-to-2-days rewrite of each state, from Iceberg's own scan report."""
    run = _run(results)
    measurements, states, _ = _frames(run)
    cells = _cells(measurements)
    ice = cells[(cells["format"] == "iceberg") & (cells["window"] == "1d") & (cells["setup"] == "local")]
    rows = []
    for rec in ice.sort_values(["dataset", "profile"]).itertuples():
        state = states[(states["dataset"] == rec.dataset) & (states["profile"] == rec.profile)].iloc[0]
        days = state["data_files"] / state["manifests"] / (state["data_files"] / state["days"])
        rows.append(
            [
                f"`{rec.dataset}`",
                rec.profile,
                num(rec.manifests_scanned),
                num(rec.manifests_total),
                pct(rec.manifests_scanned / rec.manifests_total),
                "every day" if rec.profile == "as_ingested" else num(days, 2),
            ]
        )
    head = ["state", "layout", "1d reads", "manifests", "share read", "days of entries per manifest"]
    return render("metadata/counts.md.j2", provenance=provenance(run), table=table(head, rows))


def planning_tables(results: Path) -> str:
    """Per state: median planning per variant and window (seconds), with the rounds behind each."""
    run = _run(results)
    measurements, _, _ = _frames(run)
    cells = _cells(measurements)
    states = []
    for dataset, part in cells.groupby("dataset", sort=False):
        order = part.drop_duplicates("window").sort_values("window_hours")["window"].tolist()
        grid = part.pivot(index="variant", columns="window", values="planning_ms")[order] / 1e3
        n = part.pivot(index="variant", columns="window", values="n")[order]
        rounds = [int(part["n"].min()), int(part["n"].max())]
        varies = rounds[0] != rounds[1]  # then each cell carries its own n

        def shown(seconds: float, k: float, varies: bool = varies) -> str:
            return num(seconds, 2) + (f" ({k:.0f})" if varies else "")

        rows = [[f"`{v}`", *map(shown, grid.loc[v], n.loc[v])] for v in grid.index]
        rendered = table(["variant", *order], rows)
        states.append({"dataset": dataset, "rounds": rounds, "varies": varies, "table": rendered})
    return render(
        "metadata/planning.md.j2",
        provenance=provenance(run),
        states=states,
        interval_n=MIN_VALUES,
        few=all(st["rounds"][1] < MIN_VALUES for st in states),
    )


def modes_table(results: Path) -> str:
    """Distributed against local planning (and local with Iceberg's caches on), per state, layout
    and window: the ratio of medians, beside what planning read."""
    run = _run(results)
    measurements = _frames(run)[0]
    cells = _cells(measurements)
    ice = cells[cells["format"] == "iceberg"]
    local = ice[ice["setup"] == "local"].set_index(["dataset", "profile", "window"])
    rows, ratios, matched = [], {}, {}
    for mode in ("distributed", "local_cache"):
        other = ice[ice["setup"] == mode].set_index(["dataset", "profile", "window"])
        ratios[mode], matched[mode] = [], []
        for key in other.index:
            if key not in local.index:
                continue
            rec, base = other.loc[key], local.loc[key]
            ratios[mode].append(rec["planning_ms"] / base["planning_ms"])
            matched[mode].append(base["files"])
            rows.append(
                [
                    f"`{key[0]}`",
                    key[1],
                    key[2],
                    mode,
                    num(base["manifests_scanned"]),
                    num(base["entries"]),
                    num(base["planning_ms"] / 1e3, 2),
                    num(rec["planning_ms"] / 1e3, 2),
                    f"{base['n']:.0f} / {rec['n']:.0f}",
                    ratio(rec["planning_ms"] / base["planning_ms"]),
                ]
            )
    found = {mode: [x for x in r if pd.notna(x)] for mode, r in ratios.items()}  # error rows: no figure
    modes = [
        {"mode": mode, "low": min(r), "high": max(r), "cells": len(r), "faster": sum(x < 1 for x in r)}
        for mode, r in found.items()
        if r
    ]
    return render(
        "metadata/modes.md.j2",
        provenance=provenance(run),
        modes=modes,
        bins=by_matched(ratios["distributed"], matched["distributed"]),
        errors=cells_errors(measurements),
        rows=rows,
    )


# Bins of entries matched (the scan tasks planning returns), for the distributed/local ratios.
MATCHED_BINS = [0, 10_000, 100_000, 1_000_000, float("inf")]


def by_matched(ratios: list[float], matched: list[float]) -> list[dict[str, object]]:
    """The distributed/local ratio's median per bin of entries matched: what distributed planning
    ships from the executors to the driver, and what local planning never serialises."""
    cells = pd.DataFrame({"ratio": ratios, "matched": matched}).dropna()
    if cells.empty:
        return []
    cells["bin"] = pd.cut(cells["matched"], MATCHED_BINS, right=False)
    return [
        {
            "low": interval.left,
            "high": None if interval.right == float("inf") else interval.right - 1,
            "median": part["ratio"].median(),
            "cells": len(part),
            "faster": int((part["ratio"] < 1).sum()),
        }
        for interval, part in cells.groupby("bin", observed=True)
    ]


def cells_errors(measurements: pd.DataFrame) -> str:
    """Each variant and window with error rows, and the first error's text."""
    bad = measurements[measurements["status"] != "ok"]
    parts = []
    for (dataset, variant, window), part in bad.groupby(["dataset", "variant", "window"], sort=False):
        parts.append(f"`{dataset}` `{variant}` {window}: {str(part['error'].iloc[0])[:160]}")
    return "; ".join(parts)


def anchors_table(results: Path) -> str:
    """The published anchors beside the nearest measured cells (never tuned to meet them)."""
    run = _run(results)
    measurements, states, _ = _frames(run)
    cells = _cells(measurements)
    files = states.drop_duplicates("dataset").set_index("dataset")["data_files"]
    cells = cells.assign(data_files=cells["dataset"].map(files))
    rows = []
    for anchor in ANCHORS:
        nearest = cells.iloc[(cells["data_files"] - anchor.files).abs().argsort()]["data_files"].iloc[0]
        near = cells[
            (cells["data_files"] == nearest) & (cells["format"] == "iceberg") & (cells["setup"] == "local")
        ]
        for profile, part in near.groupby("profile"):
            lo, hi = part["planning_ms"].min() / 1e3, part["planning_ms"].max() / 1e3
            rows.append(
                [
                    anchor.claim,
                    anchor.published,
                    f"{num(nearest)} files, {profile}, local",
                    f"{num(lo, 2)} to {num(hi, 2)} s",
                ]
            )
    head = ["anchor", "published", "icelab cell (count_window, every window measured)", "icelab planning"]
    chart = f"../results/reference/charts/{EXPERIMENT}/planning_vs_files.png"
    return render("metadata/anchors.md.j2", provenance=provenance(run), table=table(head, rows), chart=chart)


def _holdout(results: Path) -> planning_model.Holdout:
    measurements, states, windows = planning_runs.load(_run(results))
    reference = [planning_runs.measurements(r) for r in planning_runs.reference_runs(results / "reference")]
    return planning_model.holdout(measurements, states, windows, reference=reference)


def fit_block(results: Path) -> str:
    """Coefficients with 95% intervals of the fit on the states up to 1M files."""
    run, held = _run(results), _holdout(results)
    report = costmodel.coefficient_report(held.fits)
    return render("metadata/fit.md.j2", provenance=provenance(run), limit=held.limit, report=report)


def holdout_block(results: Path) -> str:
    """Predicted against measured: every cell of the held-out 10M state, and per layout the
    errors on the medium real-data runs (manifest_8mb and manifest_sweep: many cells each)."""
    held = _holdout(results)
    text = costmodel.checked_report(held.held_out, "held out (above the fit's limit)")
    summary = planning_model.error_summary(held.reference)
    rows = [
        [r.format, r.mode, r.layout, r.cells, pct(r.median_abs_error, 1), pct(r.max_abs_error, 1)]
        for r in summary.itertuples()
    ]
    head = ["format", "mode", "layout", "cells", "median abs. error", "max abs. error"]
    return render("metadata/holdout.md.j2", report=text, table=table(head, rows))


def repeat_block(results: Path) -> str:
    """The same medium cells in separate reference runs: how far their medians lie apart, the
    scatter any check of the model against one run carries."""
    runs = planning_runs.repeat_runs(results / "reference")
    summary = planning_model.spread_summary(
        planning_model.repeat_spread({r.run_id: planning_runs.measurements(r) for r in runs})
    )
    rows = [
        [
            r.format,
            r.mode,
            f"`{r.dataset}`",
            r.layout,
            r.cells,
            r.runs,
            pct(r.median_spread, 1),
            pct(r.max_spread, 1),
        ]
        for r in summary.itertuples()
    ]
    head = ["format", "mode", "dataset", "layout", "cells", "runs", "median spread", "max spread"]
    return render("metadata/repeat.md.j2", runs=runs, table=table(head, rows))


def _utc(run: Run, key: str) -> dt.datetime:
    return dt.datetime.fromisoformat(run.meta()[key])


def _by_start(runs: list[Run]) -> list[Run]:
    return sorted(runs, key=lambda r: _utc(r, "started_utc"))


def sitting_runs(results: Path) -> tuple[Run, list[Run]]:
    """The one-sitting set: its metadata_scale run (the fit) and the medium runs it predicts.

    Raises:
        LookupError: when the set is missing a run.
        ValueError: when one run started more than SITTING_GAP after the one before it finished,
            or the runs did not all plan with AQE alike (`_aqe`).
    """
    base = results / "reference" / SITTING
    fit = latest_runs(find_runs(base)).get(EXPERIMENT)
    refs = planning_runs.reference_runs(base)
    if fit is None or not refs:
        raise LookupError(f"no complete {EXPERIMENT} run and medium runs under {base}")
    ordered = _by_start([fit, *refs])
    for before, after in itertools.pairwise(ordered):
        gap = _utc(after, "started_utc") - _utc(before, "finished_utc")
        if gap > SITTING_GAP:
            raise ValueError(f"{after.run_id} started {gap} after {before.run_id} finished: not one sitting")
    aqe = {r.run_id: _aqe(r) for r in ordered}
    if len(set(aqe.values())) > 1:
        raise ValueError("not planned alike: " + ", ".join(f"{run} {how}" for run, how in aqe.items()))
    return fit, refs


def _predicted(fit: Run, frames: list[pd.DataFrame]) -> planning_model.Holdout:
    """The model fitted on `fit`'s states, the medium runs' `frames` predicted."""
    measurements, states, windows = planning_runs.load(fit)
    return planning_model.holdout(measurements, states, windows, reference=frames)


def sitting_check(results: Path) -> tuple[Run, list[Run], planning_model.Holdout]:
    """The one-sitting set's runs and the model fitted on its states, its medium runs predicted."""
    fit, refs = sitting_runs(results)
    return fit, refs, _predicted(fit, [planning_runs.measurements(r) for r in refs])


def _measured_on(run: Run) -> str:
    """A metadata_scale run's states, another run's dataset."""
    return ", ".join(_states(run)) if run.experiment == EXPERIMENT else str(run.meta().get("dataset"))


def _aqe(run: Run) -> str:
    """Whether the run planned with AQE on (env.json's Spark settings; unset is Spark's default,
    on): the states run and the medium runs it predicts compare like for like only when alike."""
    value = str(run.env().get("spark_conf", {}).get("spark.sql.adaptive.enabled", "true")).lower()
    return "AQE on" if value == "true" else "AQE off"


def sitting_block(results: Path) -> str:
    """The medium real-data runs predicted by a fit on states measured in the same sitting:
    the check without the drift between days that the repeated cells show."""
    fit, refs = sitting_runs(results)
    frames = {r.run_id: planning_runs.measurements(r) for r in refs}  # read once: the check and the spread
    held = _predicted(fit, list(frames.values()))
    ref = held.reference
    rows = [
        [r.format, r.mode, r.layout, r.cells, pct(r.median_abs_error, 1), pct(r.max_abs_error, 1)]
        for r in planning_model.error_summary(ref).itertuples()
    ]
    head = ["format", "mode", "layout", "cells", "median abs. error", "max abs. error"]
    runs = [
        {
            "experiment": r.experiment,
            "provenance": provenance(r),
            "measured_on": _measured_on(r),
            "aqe": _aqe(r),
            "start": f"{_utc(r, 'started_utc'):%Y-%m-%d %H:%M}",
            "end": f"{_utc(r, 'finished_utc'):%H:%M}",
        }
        for r in _by_start([fit, *refs])
    ]
    spread = planning_model.spread_summary(planning_model.repeat_spread(frames))
    same = [
        [r.format, r.mode, r.layout, r.cells, pct(r.median_spread, 1), pct(r.max_spread, 1)]
        for r in spread.itertuples()
    ]
    return render(
        "metadata/sitting.md.j2",
        runs=runs,
        limit=held.limit,
        within=int((ref["rel_error"].abs() <= BAR).sum()),
        cells=len(ref),
        bar=BAR,
        under=int((ref["rel_error"] < 0).sum()),
        errors=table(head, rows),
        spread=table(["format", "mode", "layout", "cells", "median spread", "max spread"], same),
    )


def example_block(results: Path) -> str:
    """`python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d` on the reference run."""
    run = _run(results)
    out = io.StringIO()
    shown = ["--files", "5e6", "--days", "365", "--windows", "1d,30d"]
    costmodel.run(costmodel.parser().parse_args([*shown, "--results", str(run.path)]), out=out)
    text = out.getvalue().replace(str(run.path), f"results/reference/{EXPERIMENT}/{run.run_id}")
    return render("metadata/example.md.j2", args=shown, output=text.rstrip())


BLOCKS: dict[str, Callable[[Path], str]] = {
    "meta-states": states_table,
    "meta-counts": counts_table,
    "meta-planning": planning_tables,
    "meta-modes": modes_table,
    "meta-anchors": anchors_table,
    "costmodel-fit": fit_block,
    "costmodel-holdout": holdout_block,
    "costmodel-repeat": repeat_block,
    "costmodel-sitting": sitting_block,
    "costmodel-example": example_block,
}
