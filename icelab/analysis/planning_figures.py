"""The figures of docs/planning.md's and docs/protocol.md's tables and notes, from the reference
planning runs: `manifest_8mb` (the study's 8 MB manifests against as ingested and Parquet) and
`manifest_sweep` (every manifest size), with `manifest_health`'s report for how the as-ingested
manifests span the days. Each function returns the named figures of one block; the page's
template writes them.
"""

from __future__ import annotations

import pandas as pd

from icelab.analysis.claims import require
from icelab.analysis.effect_intervals import MIN_VALUES
from icelab.analysis.planning_cases import (
    AS_INGESTED,
    HIDDEN,
    NESTED,
    PARQUET,
    PUSHDOWN,
    QUERY,
    STUDY_TARGET,
    WIDE_IQR,
    aligned,
    cell,
    days_per_manifest,
    growth,
    label,
    machine,
    median,
    plain,
    planning_median,
    profile,
    reads_all,
    short,
    summary,
    table_state,
    values,
    variant_order,
    wide_narrow,
    windows,
)
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

SCANNED = ("partitions_scanned", "files_scanned", "manifests_scanned", "manifests_total")


def profiles(sweep: Run, health: dict[str, dict]) -> dict[str, object]:
    """The table states of the sweep: manifests and their bytes per profile (run.json), and how
    the as-ingested manifests span the days (`health`, the manifest_health report by state)."""
    config = sweep.config()["dataset"]
    ingested_table = table_state(sweep, AS_INGESTED)["table"]
    rows = []
    for variant in [v for v in variant_order(sweep) if v != PARQUET]:
        state, name = table_state(sweep, variant), profile(variant)
        row: dict[str, object] = {
            "profile": name,
            "target": variant == STUDY_TARGET,
            "manifests": state["manifests"],
            "bytes": state["manifest_bytes"],
            "kind": "other",
        }
        if variant == AS_INGESTED:
            span = health[name]["stats"]["span"]
            row.update(
                kind="ingested",
                per_commit=state["manifests"] == config["commits"],
                span_all=span["min"] == 1.0,
                span_median=span["median"],
                partitions=health[name]["day_partitions"],
            )
        elif name.startswith("rewrite_"):
            row.update(kind="rewrite", days=days_per_manifest(sweep, variant))
        elif state["table"] == ingested_table:
            row.update(kind="same_table", conf=list(state.get("spark_conf") or {}))
        rows.append(row)
    return {"span_days": config["span_days"], "rows": rows}


def same_windows(eight: Run, sweep: Run) -> list[str]:
    """The windows both planning runs measure (checked to be the same)."""
    require(windows(eight) == windows(sweep), "both planning runs measure the same windows")
    return windows(eight)


def _scanned(row: pd.Series) -> dict[str, object]:
    """What planning read in one case: partitions and files listed (Parquet), or manifests."""
    return {"listed": bool(pd.isna(row["manifests_total"])), **{k: row[k] for k in SCANNED}}


def _table_head(run: Run, frame: pd.DataFrame) -> dict[str, object]:
    """What every planning table's note says of its run: machine, protocol, rounds, thresholds."""
    wide, narrow = wide_narrow(run)
    return {
        "windows": windows(run),
        "wide": wide,
        "narrow": narrow,
        "machine": machine(run),
        "p": run.config()["protocol"],
        "n": int(frame["planning_ms_n"].min()),
        "wide_iqr": WIDE_IQR,
    }


def eight_mb(run: Run) -> dict[str, object]:
    """manifest_8mb: median planning per variant and window, both queries, with growth and scans."""
    frame = summary(run)
    head = _table_head(run, frame)
    grown = growth(run, frame)
    rows = [
        {
            "label": label(run, variant),
            "query": query if variant == PARQUET else None,
            "cells": [planning_median(cell(frame, query, variant, w)) for w in head["windows"]],
            "growth": grown.loc[(query, variant), "planning_ratio"],
            "narrow": _scanned(cell(frame, query, variant, head["narrow"])),
            "wide": _scanned(cell(frame, query, variant, head["wide"])),
        }
        for query in run.config()["experiment"]["queries"]
        for variant in variant_order(run)
    ]
    return {**head, "rows": rows}


def clocks(run: Run) -> dict[str, object]:
    """manifest_8mb: Iceberg's own planning clock beside the harness's, per window."""
    frame, wins = summary(run), windows(run)
    rows = [
        {
            "label": label(run, v),
            "cells": [
                (median(frame, QUERY, v, w), median(frame, QUERY, v, w, "iceberg_planning_ms")) for w in wins
            ],
        }
        for v in variant_order(run)
        if v != PARQUET
    ]
    gaps = [harness - iceberg for r in rows for harness, iceberg in r["cells"]]
    require(min(gaps) > 0, "the harness's planning is above Iceberg's own clock in every cell")
    return {"query": QUERY, "windows": wins, "rows": rows, "gaps": gaps}


def execution(run: Run) -> dict[str, object]:
    """manifest_8mb: the widest window's execution, and the harness's overhead (overhead.csv)."""
    frame, (wide, _) = summary(run), wide_narrow(run)
    overhead = stored(run).table("overhead.csv")
    if "faulted" in overhead:  # pairs measured across a store outage (runs since the column)
        overhead = overhead[~overhead["faulted"].astype(bool)]
    protocol = run.config()["protocol"]
    by = overhead.groupby("variant")
    cost, base = by["overhead_ms"].median(), by["plain_ms"].median()
    variants = [
        {
            "name": plain(run, v),
            "parquet": v == PARQUET,
            "seconds": median(frame, QUERY, v, wide, "execution_ms") / 1e3,
            "each": [x / 1e3 for x in values(run, QUERY, v, wide, "execution_ms")],
            "overhead": cost[v],
            "plain_ms": base[v],
        }
        for v in variant_order(run)
    ]
    return {
        "wide": wide,
        "query": QUERY,
        "variants": variants,
        "n": int(frame["execution_ms_n"].min()),
        "interval_n": MIN_VALUES,
        "overhead_window": protocol["overhead_window"],
        "overhead_pairs": protocol["overhead_pairs"],
        "pairs": {"min": overhead["overhead_ms"].min(), "max": overhead["overhead_ms"].max()},
    }


def sweep(run: Run) -> dict[str, object]:
    """manifest_sweep: median planning per profile and window, growth on both clocks, manifests read."""
    frame = summary(run)
    head = _table_head(run, frame)
    wins, wide, narrow = head["windows"], head["wide"], head["narrow"]
    grown = growth(run, frame)
    picks = [narrow, wins[len(wins) // 2], wide]
    rows = []
    for variant in variant_order(run):
        per = {w: cell(frame, QUERY, variant, w) for w in wins}
        g = grown.loc[(QUERY, variant)]
        parquet = variant == PARQUET
        state = {} if parquet else table_state(run, variant)
        read = "partitions_scanned" if parquet else "manifests_scanned"
        rows.append(
            {
                "profile": profile(variant),
                "parquet": parquet,
                "partitions": per[wide]["partitions_scanned"],
                "manifests": state.get("manifests"),
                "bytes": state.get("manifest_bytes"),
                "cells": [planning_median(per[w]) for w in wins],
                "growth": g["planning_ratio"],
                "iceberg_growth": g["iceberg_planning_ratio"],
                "reads": [per[w][read] for w in picks],
            }
        )
    return {**head, "query": QUERY, "picks": picks, "rows": rows}


def sweep_notes(run: Run) -> dict[str, object]:
    """manifest_sweep: the nested query's growth, and the manifest counts (deterministic)."""
    frame, wins, (wide, narrow) = summary(run), windows(run), wide_narrow(run)
    grown = growth(run, frame)
    measured = stored(run).measurements()
    counted = measured[measured["status"] == "ok"]
    per_case = counted.groupby(["query_id", "variant", "window"], dropna=False)["manifests_scanned"]
    require(bool((per_case.nunique(dropna=False) == 1).all()), "the manifest counts are deterministic")
    iceberg = frame[frame["format"] == "iceberg"].dropna(subset=["manifests_scanned"])
    by_query = iceberg.pivot_table(
        index=["variant", "window"], columns="query_id", values="manifests_scanned", aggfunc="first"
    )
    ingested = iceberg[iceberg["variant"] == AS_INGESTED]
    return {
        "nested": NESTED,
        "wide": wide,
        "narrow": narrow,
        "growth": [
            {"name": short(v), "ratio": grown.loc[(NESTED, v), "planning_ratio"]} for v in variant_order(run)
        ],
        "same": bool(by_query.nunique(axis=1).le(1).all()),
        "queries": len(run.config()["experiment"]["queries"]),
        "windows": wins,
        "examples": [
            {
                "profile": profile(v),
                "manifests": table_state(run, v)["manifests"],
                "days": days_per_manifest(run, v),
                "counts": [cell(frame, QUERY, v, w)["manifests_scanned"] for w in wins],
            }
            for v in aligned(run)
        ],
        "all_read": bool((ingested["manifests_scanned"] == ingested["manifests_total"]).all()),
        "total": table_state(run, AS_INGESTED)["manifests"],
    }


def pushdown(run: Run) -> dict[str, object]:
    """manifest_sweep: where Iceberg's aggregate push-down answers from metadata, and what it costs."""
    frame, wins = summary(run), windows(run)

    def nodes(query: str) -> dict[str, float]:
        return {w: float(cell(frame, query, PUSHDOWN, w)["scan_nodes"]) for w in wins}

    on_query, hidden = nodes(QUERY), nodes(HIDDEN)
    answered = [w for w in wins if hidden[w] == 0]
    require(all(n >= 1 for n in on_query.values()), f"push-down never applies to `{QUERY}`")
    require(bool(answered), f"push-down answers some `{HIDDEN}` window from metadata")
    require(all(w.endswith("d") for w in answered), "the windows answered from metadata are day-aligned")
    require(reads_all(frame, HIDDEN, AS_INGESTED), "the as-ingested table reads every manifest")
    parquet_rows = [cell(frame, HIDDEN, PARQUET, w) for w in wins]
    parts = {int(r["partitions_scanned"]) for r in parquet_rows}
    require(len(parts) == 1, f"Parquet lists the same partitions for every `{HIDDEN}` window")
    return {
        "query": QUERY,
        "hidden": HIDDEN,
        "answered": answered,
        "scanned": [w for w in wins if hidden[w] != 0],
        "fast": [median(frame, HIDDEN, PUSHDOWN, w, "execution_ms") for w in answered],
        "slow": [median(frame, HIDDEN, AS_INGESTED, w, "execution_ms") for w in answered],
        "planning": [median(frame, HIDDEN, PUSHDOWN, w) for w in answered],
        "total": table_state(run, AS_INGESTED)["manifests"],
        "partitions": parts.pop(),
        "parquet": [float(r["planning_ms_median"]) for r in parquet_rows],
    }


def protocol_medium(run: Run) -> dict[str, object]:
    """The reference planning run's protocol and what one wide execution costs against planning."""
    frame, (wide, _) = summary(run), wide_narrow(run)
    widest = frame[frame["window"] == wide]
    return {
        "machine": machine(run),
        "p": run.config()["protocol"],
        "wide": wide,
        "files": widest["files_scanned"].max(),
        "seconds": widest["execution_ms_median"] / 1e3,
        "slowest": frame["planning_ms_median"].max(),
    }
