"""The figures of a `metadata_scale` run: what each state and layout holds, what planning read and
took per cell, distributed against local planning, and the cells nearest the published anchors.

A cell is one dataset (state), format, profile (layout), setup (planning mode), variant and window;
its figures are medians over the rows that count (`rows.counted`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import pandas as pd

from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

AS_INGESTED_VARIANT = "iceberg/as_ingested"
# Bins of entries matched (the scan tasks planning returns), for the distributed/local ratios.
MATCHED_BINS = [0, 10_000, 100_000, 1_000_000, float("inf")]
CELL = ["dataset", "profile", "window"]


class Anchor(Protocol):
    """A published planning figure at a number of data files."""

    files: float


def medium_entry_bytes(run: Run) -> float:
    """Bytes per manifest entry Iceberg wrote for a real dataset (a `manifest_8mb` run): the
    as-ingested manifests' bytes over the entries a full scan of them reads."""
    m = stored(run).measurements()
    ice = m[(m["variant"] == AS_INGESTED_VARIANT) & (m["status"] == "ok")]
    entries = int((ice["files_scanned"] + ice["files_skipped"]).max())
    return run.meta()["variants"][AS_INGESTED_VARIANT]["manifest_bytes"] / entries


def states(run: Run, medium: float) -> list[dict[str, Any]]:
    """Per state as run.json records it: the days each as-ingested manifest spans (shares of the
    state's days, lowest and highest) and per layout its bytes per entry, against `medium`'s."""
    found = []
    for label, info in run.meta()["states"].items():
        spans = pd.Series(info["as_ingested_days_per_manifest"]) / info["days"]
        layouts = {
            name: {**built, "per_entry": built["manifest_bytes"] / built["entries"]}
            for name, built in info["layouts"].items()
        }
        for built in layouts.values():
            built["vs_medium"] = built["per_entry"] / medium - 1
        found.append({**info, "label": label, "layouts": layouts, "spans": (spans.min(), spans.max())})
    return found


def cells(measurements: pd.DataFrame) -> pd.DataFrame:
    """Per cell: median planning, rounds (n), manifests scanned and in all, entries read (skipped
    and scanned), files matched and partitions, over the rows that count."""
    keys = ["dataset", "format", "profile", "setup", "variant", "window", "window_hours"]
    return (
        counted(measurements)
        .groupby(keys, dropna=False)
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


def _cells(run: Run) -> pd.DataFrame:
    return cells(stored(run).measurements())


def window_counts(run: Run) -> list[dict[str, Any]]:
    """Per state and layout, local planning of a 1-day window: manifests read and in all, and the
    days of entries one manifest holds (None as ingested: every manifest holds every day)."""
    c = _cells(run)
    built = stored(run).table("states.csv")
    ice = c[(c["format"] == "iceberg") & (c["window"] == "1d") & (c["setup"] == "local")]
    rows = []
    for rec in ice.sort_values(["dataset", "profile"]).itertuples():
        state = built[(built["dataset"] == rec.dataset) & (built["profile"] == rec.profile)].iloc[0]
        days = state["data_files"] / state["manifests"] / (state["data_files"] / state["days"])
        rows.append({**rec._asdict(), "days": None if rec.profile == "as_ingested" else days})
    return rows


def window_plans(run: Run, window: str, data_files: int | None = None) -> list[dict[str, Any]]:
    """Per rewritten layout and Iceberg mode of each state (of `data_files` entries when given),
    the plan of one window: the layout's target, manifests and mean entries per manifest
    (states.csv), the manifests and entries the plan read (Iceberg's scan report), the largest
    manifest among them (windows.csv: one worker thread reads it alone), its planning seconds
    over the rows that count: median, rounds, lowest and highest, and the CPU it ran on."""
    stored_run = stored(run)
    # Plans of two runs compare only on one CPU: say which each ran on.
    cpu = (run.env().get("machine") or {}).get("cpu") or "?"
    built = stored_run.table("states.csv").set_index(["dataset", "profile"])
    reads = stored_run.table("windows.csv").set_index(["dataset", "profile", "window"])
    m = stored_run.counted()
    ice = m[(m["format"] == "iceberg") & (m["window"] == window) & (m["profile"] != "as_ingested")]
    rows = []
    for (dataset, profile, setup), part in ice.groupby(["dataset", "profile", "setup"]):
        state, read = built.loc[(dataset, profile)], reads.loc[(dataset, profile, window)]
        if data_files is not None and state["data_files"] != data_files:
            continue
        seconds = part["planning_ms"] / 1e3
        rows.append(
            {
                "run": run.run_id,
                "cpu": cpu,
                "dataset": dataset,
                "profile": profile,
                "setup": setup,
                "target": state["target"],
                "data_files": int(state["data_files"]),
                "manifests": int(state["manifests"]),
                "entries_per_manifest": state["data_files"] / state["manifests"],
                "manifests_read": int(part["manifests_scanned"].median()),
                "entries_read": int((part["files_scanned"] + part["files_skipped"]).median()),
                "largest_read": int(read["largest_manifest_entries"]),
                "median_s": seconds.median(),
                "n": len(seconds),
                "low_s": seconds.min(),
                "high_s": seconds.max(),
            }
        )
    return rows


def planning_grids(run: Run) -> list[dict[str, Any]]:
    """Per state: median planning seconds and rounds per variant (rows) and window (columns, shortest
    first), the fewest and most rounds of a cell, and whether they differ."""
    grids = []
    for dataset, part in _cells(run).groupby("dataset", sort=False):
        order = part.drop_duplicates("window").sort_values("window_hours")["window"].tolist()
        seconds = part.pivot(index="variant", columns="window", values="planning_ms")[order] / 1e3
        n = part.pivot(index="variant", columns="window", values="n")[order]
        rounds = [int(part["n"].min()), int(part["n"].max())]
        rows = [(v, list(zip(seconds.loc[v], n.loc[v], strict=True))) for v in seconds.index]
        grids.append(
            {
                "dataset": dataset,
                "windows": order,
                "rows": rows,
                "rounds": rounds,
                "varies": rounds[0] != rounds[1],
            }
        )
    return grids


def mode_ratios(run: Run) -> dict[str, Any]:
    """Distributed planning and local with Iceberg's caches on, each against local, per Iceberg
    cell: the range of the ratios per mode (`modes`) and the distributed ratios by entries
    matched (`bins`)."""
    c = _cells(run)
    ice = c[c["format"] == "iceberg"]
    local = ice[ice["setup"] == "local"].set_index(CELL)
    ratios, matched = {}, {}
    for mode in ("distributed", "local_cache"):
        other = ice[ice["setup"] == mode].set_index(CELL)
        ratios[mode], matched[mode] = [], []
        for key in other.index:
            if key not in local.index:
                continue
            rec, base = other.loc[key], local.loc[key]
            ratios[mode].append(rec["planning_ms"] / base["planning_ms"])
            matched[mode].append(base["files"])
    found = {mode: [x for x in r if pd.notna(x)] for mode, r in ratios.items()}  # error rows: no figure
    modes = [
        {"mode": mode, "low": min(r), "high": max(r), "cells": len(r), "faster": sum(x < 1 for x in r)}
        for mode, r in found.items()
        if r
    ]
    return {"modes": modes, "bins": by_matched(ratios["distributed"], matched["distributed"])}


def by_matched(ratios: list[float], matched: list[float]) -> list[dict[str, object]]:
    """The distributed/local ratio's median per bin of entries matched: what distributed planning
    ships from the executors to the driver, and what local planning never serialises."""
    frame = pd.DataFrame({"ratio": ratios, "matched": matched}).dropna()
    if frame.empty:
        return []
    frame["bin"] = pd.cut(frame["matched"], MATCHED_BINS, right=False)
    return [
        {
            "low": interval.left,
            "high": None if interval.right == float("inf") else interval.right - 1,
            "median": part["ratio"].median(),
            "cells": len(part),
            "faster": int((part["ratio"] < 1).sum()),
        }
        for interval, part in frame.groupby("bin", observed=True)
    ]


def errors(run: Run) -> list[dict[str, str]]:
    """Each state, variant and window with error rows, and the first error's text."""
    m = stored(run).measurements()
    bad = m[m["status"] != "ok"]
    return [
        {"dataset": dataset, "variant": variant, "window": window, "error": str(part["error"].iloc[0])}
        for (dataset, variant, window), part in bad.groupby(["dataset", "variant", "window"], sort=False)
    ]


def anchor_cells(run: Run, anchors: Iterable[Anchor]) -> list[dict[str, Any]]:
    """Per anchor and layout, the state nearest its data files: the fastest and slowest local
    planning seconds of Iceberg's cells there (never tuned to meet the anchor)."""
    c = _cells(run)
    files = stored(run).table("states.csv").drop_duplicates("dataset").set_index("dataset")["data_files"]
    c = c.assign(data_files=c["dataset"].map(files))
    rows = []
    for anchor in anchors:
        nearest = c.iloc[(c["data_files"] - anchor.files).abs().argsort()]["data_files"].iloc[0]
        near = c[(c["data_files"] == nearest) & (c["format"] == "iceberg") & (c["setup"] == "local")]
        for profile, part in near.groupby("profile"):
            seconds = part["planning_ms"] / 1e3
            rows.append(
                {
                    "anchor": anchor,
                    "files": nearest,
                    "profile": profile,
                    "low": seconds.min(),
                    "high": seconds.max(),
                }
            )
    return rows
