"""A canonical run's setups against Parquet and against the initial setup: the geometric means
with their intervals and the figures the page's reading of them quotes."""

from __future__ import annotations

import pandas as pd

from icelab.analysis import effect_intervals, stats
from icelab.analysis.canonical_plan import PLAN_QUERY
from icelab.analysis.canonical_run import (
    PARQUET,
    Canonical,
    interval,
    order_effect,
    rewritten,
    setup,
    short,
    shown,
    target_of,
    vectorized_queries,
)


def versus_parquet(c: Canonical) -> dict[str, object]:
    """Iceberg / Parquet per setup: geometric means with their intervals (the queries fixed, and
    resampled), the worst query by total, the planning share."""
    by = c.setups.set_index("variant")
    rows = []
    for variant in c.iceberg:
        r = by.loc[variant]
        rows.append(
            {
                "setup": setup(variant),
                "parts": [
                    {"value": r[f"{t}_geomean"], "interval": interval(c.versus_ci, variant, t)}
                    for t in stats.PARTS
                ],
                "resampled": [interval(c.versus_qci, variant, t) for t in stats.PARTS],
                "worst": short(r["worst_query"]),
                "worst_ratio": r["worst_total_ratio"],
                "planning_share": r["planning_share"],
            }
        )
    return {
        "rows": rows,
        "parquet_share": by.loc[PARQUET, "planning_share"],
        "queries": len(c.windows),
        "confidence": effect_intervals.CONFIDENCE,
        "shown": {setup(v): shown(c, v) for v in c.iceberg},
    }


def gains(c: Canonical) -> dict[str, object]:
    """Each setup against the initial one: initial / setup, geometric means (`gains.csv` inverted),
    with their intervals."""
    rows = [
        {
            "setup": setup(v),
            "parts": [
                {"value": c.gain(v, t), "interval": interval(c.gains_ci, v, t, invert=True)}
                for t in stats.PARTS
            ],
        }
        for v in c.iceberg
        if v != c.initial
    ]
    return {"rows": rows}


def reading(c: Canonical) -> dict[str, object]:
    """What the three bullets that read the figures quote: planning, execution, the noise floor."""
    planning, files = c.median("planning_ms"), c.count("files_scanned")
    i, o, rewrite = c.initial, c.optimized, rewritten(c)
    expiry, nested, vector = (c.find(n) for n in ("snapshot_expiry", "nested_pruning", "vectorization"))
    ip, pp = planning[i], planning[PARQUET]
    manifests = c.meta["variants"][i]["manifests"]
    per_scan = c.count("manifests_scanned")[i] / c.count("scan_nodes")[i]
    full = [q for q, w in c.windows.items() if w == "full"]
    narrow = [q for q, w in c.windows.items() if w in ("1h", "1d")]
    fewer = [q for q in narrow if files.loc[q, i] < files.loc[q, PARQUET]]
    order = order_figures(order_effect(c))

    def at(q: str) -> dict[str, object]:
        return {"query": short(q), "window": c.windows[q], "ms": pp[q]}

    return {
        "initial": setup(i),
        "optimized": setup(o),
        "every": bool((per_scan == manifests).all()),
        "manifests": manifests,
        "initial_planning": {"min": ip.min(), "max": ip.max(), "median": ip.median()},
        "multi": [short(q) for q, n in c.count("scan_nodes")[i].items() if n > 1],
        "fastest": at(pp.idxmin()),
        "slowest": at(pp.idxmax()),
        "rewrite": {
            "setup": setup(rewrite),
            "target": target_of(c, rewrite),
            "manifests": c.meta["variants"][rewrite]["manifests"],
            "gain": c.gain(rewrite, "planning_ms"),
            "interval": interval(c.gains_ci, rewrite, "planning_ms", invert=True),
            "median": planning[rewrite].median(),
        },
        "expiry": expiry
        and {
            "snapshots": c.meta["variants"][i]["snapshots"] - c.meta["variants"][expiry]["snapshots"],
            "gain": c.gain(expiry, "planning_ms"),
            "execution_gain": c.gain(expiry, "execution_ms"),
        },
        "full": [
            {
                "query": short(q),
                "initial": planning.loc[q, i],
                "optimized": planning.loc[q, o],
                "parquet": pp[q],
            }
            for q in full
        ],
        "full_faster": sum(all(planning.loc[q, v] < pp[q] for v in c.iceberg) for q in full),
        "execution": {
            "ratio": c.geomean(i, "execution_ms"),
            "interval": interval(c.versus_ci, i, "execution_ms"),
        },
        "fewer_files": len(fewer),
        "narrow": len(narrow),
        "examples": [
            {
                "query": short(q),
                "window": c.windows[q],
                "files": files.loc[q, i],
                "parquet": files.loc[q, PARQUET],
            }
            for q in dict.fromkeys([*fewer[:1], *([PLAN_QUERY] if PLAN_QUERY in fewer else [])])
        ],
        "nested": nested and pruning_alone(c, nested),
        "vector": vector and vectorization_alone(c, vector, order["spread"]),
        "executions": c.meta["protocol"]["executions"],
        "order": order,
    }


def pruning_alone(c: Canonical, nested: str) -> dict[str, object]:
    """Nested schema pruning alone: the queries it reads fewer leaf fields for, and the three whose
    execution it shortens most."""
    execution, i = c.median("execution_ms"), c.initial
    leaves = c.plan.pivot(index="query_id", columns="variant", values="read_leaves")
    pruned = [q for q in c.windows if leaves.loc[q, nested] < leaves.loc[q, i]]
    gain = (execution.loc[pruned, i] / execution.loc[pruned, nested]).sort_values(ascending=False)
    top = [
        {
            "query": short(q),
            "leaves_before": leaves.loc[q, i],
            "leaves_after": leaves.loc[q, nested],
            "before": execution.loc[q, i],
            "after": execution.loc[q, nested],
        }
        for q in gain.index[:3]
    ]
    return {"queries": len(pruned), "top": top}


def vectorization_alone(c: Canonical, vector: str, spread: float) -> dict[str, object]:
    """Vectorization alone: initial / vectorization execution of the queries it can change, and
    whether they stay inside the cost of going first (`spread`)."""
    execution, i = c.median("execution_ms"), c.initial
    ratios = {q: execution.loc[q, i] / execution.loc[q, vector] for q in vectorized_queries(c)}
    return {
        "setup": setup(vector),
        "ratios": [{"query": short(q), "ratio": r} for q, r in ratios.items()],
        "inside": all(1 / spread <= r <= spread for r in ratios.values()),
    }


def order_figures(order: pd.DataFrame) -> dict[str, object]:
    """What going first of a query's variants costs, each setup against itself (`order_effect`)."""
    if order.empty:
        return {"cells": 0, "spread": float("nan")}
    worst = order.loc[order["excess"].idxmax()]
    return {
        "cells": len(order),
        "spread": max(order["excess"].max(), 1 / order["excess"].min()),
        "slower": int((order["excess"] > 1).sum()),
        "worst": {
            "excess": worst["excess"],
            "query": short(worst["query_id"]),
            "setup": setup(worst["variant"]),
            "first_ms": worst["first_ms"],
            "after_ms": worst["after_ms"],
        },
        "most": int(order["n_first"].max()),
        "rounds": int(order["n"].max()),
    }
