"""Which of the study's claims a canonical run reproduces, each as the figures that decide it
(and, for the claim on windows, the planning experiment's growth.csv)."""

from __future__ import annotations

import pandas as pd

from icelab.analysis.canonical_plan import versions_of
from icelab.analysis.canonical_run import (
    NESTED_PRUNING,
    PARQUET,
    VECTORIZATION,
    Canonical,
    faster,
    interval,
    rewritten,
    setup,
    short,
    shown,
    target_of,
)
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

# What the study (not this run) reported for its initial Iceberg setup, quoted, not measured.
STUDY_INITIAL = "4x on average and 10x in the worst case"
# The study's own reading of its initial benchmark (Figure 8), quoted word for word.
STUDY_EXECUTION = "Read execution was the major difference for longer running queries."
LONG_WINDOWS = ("90d", "full")


def claims(c: Canonical, planning_run: Run) -> dict[str, object]:
    """Every claim's figures: this run's, and `planning_run`'s (a planning experiment's run) for
    the claim on windows."""
    return {
        "study_initial": STUDY_INITIAL,
        "initial": setup(c.initial),
        "optimized": setup(c.optimized),
        **versions_of(c),
        "initially": initially_slower(c),
        "reader": initial_reader(c),
        "split": split_planning(c),
        "after": after_optimizations(c),
        "windows": across_windows(planning_run, c),
        "share": shares(c),
    }


def initially_slower(c: Canonical) -> dict[str, object]:
    """The study's "initially 4x slower on average, 10x worst": the initial setup's mean and worst
    query; `direction` is `size` when the mean reaches 4x, `direction` when only above 1x, each only
    when the interval with the queries resampled shows it slower (`shown`); else `unshown` or `none`."""
    planning, execution = c.median("planning_ms"), c.median("execution_ms")
    mean = c.geomean(c.initial, "total_ms")
    row = c.setups.set_index("variant").loc[c.initial]
    worst = row["worst_query"]
    wp, we = planning.loc[worst, c.initial], execution.loc[worst, c.initial]
    slower = shown(c, c.initial) == "slower"
    return {
        "direction": ("size" if mean >= 4 else "direction")
        if slower
        else ("unshown" if mean > 1 or shown(c, c.initial) is None else "none"),
        "mean": mean,
        "interval": interval(c.versus_qci, c.initial, "total_ms"),
        "worst": row["worst_total_ratio"],
        "query": short(worst),
        "window": c.windows[worst],
        "planning": wp,
        "execution": we,
        "planning_dominates": wp > we,
        "planning_ratio": c.geomean(c.initial, "planning_ms"),
    }


def initial_reader(c: Canonical) -> dict[str, object]:
    """Beside the study's "read execution was the major difference for longer running queries": the
    initial setup's execution over Parquet (geometric mean, both intervals, and per longest-window
    query), and which of the reader switches its setup (run.json `setups`) turns off."""
    conf = c.meta["setups"][setup(c.initial)]["spark_conf"]
    per_query = c.ratio("execution_ms", c.initial)
    long = [q for q, w in c.windows.items() if w in LONG_WINDOWS]
    return {
        "quote": STUDY_EXECUTION,
        "ratio": c.geomean(c.initial, "execution_ms"),
        "interval": interval(c.versus_ci, c.initial, "execution_ms"),
        "queries_interval": interval(c.versus_qci, c.initial, "execution_ms"),
        "long": [{"query": short(q), "window": c.windows[q], "ratio": per_query[q]} for q in long],
        "shown": shown(c, c.initial, "execution_ms"),
        "off": [key for key in (VECTORIZATION, NESTED_PRUNING) if not conf.get(key)],
        "on": [key for key in (VECTORIZATION, NESTED_PRUNING) if conf.get(key)],
    }


def split_planning(c: Canonical) -> dict[str, object]:
    """The study's "planning for short windows, execution for long queries": the five worst
    ratios to Parquet and execution's least share of the longest-window queries; `holds` when the
    five are all 1h/1d and that share is above half."""
    planning, execution, i = c.median("planning_ms"), c.median("execution_ms"), c.initial
    totals = c.ratio("total_ms", i).sort_values(ascending=False)
    top = list(totals.index[:5])
    long = [q for q, w in c.windows.items() if w in LONG_WINDOWS]
    share = min(execution.loc[q, i] / (planning.loc[q, i] + execution.loc[q, i]) for q in long)
    return {
        "holds": all(c.windows[q] in ("1h", "1d") for q in top) and share > 0.5,
        "planning_share": c.setups.set_index("variant").loc[i, "planning_share"],
        "top": [{"query": short(q), "window": c.windows[q], "ratio": totals[q]} for q in top],
        "execution_share": share,
        "long": [short(q) for q in long],
    }


def after_optimizations(c: Canonical) -> dict[str, object]:
    """The study's "after the optimizations, as fast as Parquet or faster": the optimized means,
    how many queries are faster, and the full-table ones."""
    o = c.optimized
    mean = c.geomean(o, "total_ms")
    n_fast, n_all = faster(c)
    totals = c.ratio("total_ms", o)
    full = [q for q, w in c.windows.items() if w == "full"]
    return {
        "shown": shown(c, o),
        "mean": mean,
        "interval": interval(c.versus_qci, o, "total_ms"),
        "noise_interval": interval(c.versus_ci, o, "total_ms"),
        "planning": c.geomean(o, "planning_ms"),
        "execution": c.geomean(o, "execution_ms"),
        "most": n_fast > n_all / 2,
        "faster": n_fast,
        "queries": n_all,
        "full": [
            {
                "query": short(q),
                "faster": totals[q] < 1,
                "ratio": 1 / totals[q] if totals[q] < 1 else totals[q],
            }
            for q in full
        ],
    }


def across_windows(planning_run: Run, c: Canonical) -> dict[str, object]:
    """The study's "planning near-constant across windows", from the planning experiment's table
    state with the manifest rewrite's target: growth from its narrow to its wide window, and its
    wide-window planning against Parquet's (`below`: `far` under half, `all` under, else `not`)."""
    growth = stored(planning_run).table("growth.csv")
    target = target_of(c, rewritten(c))
    profiles = planning_run.meta()["profiles"]  # its table state with the same manifest target
    profile = next((n for n, spec in profiles.items() if spec.get("manifest_target_size") == target), None)
    if profile is None:
        raise LookupError(f"{planning_run.run_id}: no profile with manifests rewritten at {target}")
    wide, narrow = _growth_windows(growth)
    rewrite = growth[growth["variant"] == f"iceberg/{profile}"].set_index("query_id")
    parquet = growth[growth["variant"] == PARQUET].set_index("query_id").loc[rewrite.index]
    ice_wide, pq_wide = rewrite[f"planning_ms_median_{wide}"], parquet[f"planning_ms_median_{wide}"]
    return {
        "run": planning_run.run_id,
        "target": target,
        "grows": bool((rewrite["planning_ratio"] > 1).all()),
        "narrow": narrow,
        "wide": wide,
        "ratios": list(rewrite["planning_ratio"]),
        "below": "far" if (ice_wide < pq_wide / 2).all() else "all" if (ice_wide < pq_wide).all() else "not",
        "iceberg": list(ice_wide),
        "parquet": list(pq_wide),
    }


def shares(c: Canonical) -> dict[str, object]:
    """Each optimization's total gain over the initial setup; with snapshot expiry and more than one
    optimization alone measured, the ones above and within its execution "gain" (`floor`)."""
    gains = {setup(v): c.gain(v, "total_ms") for v in c.iceberg if v != c.initial}
    o = setup(c.optimized)
    figures: dict[str, object] = {
        "optimized": gains[o],
        "interval": interval(c.gains_ci, c.optimized, "total_ms", invert=True),
        "floor": None,
    }
    expiry = c.find("snapshot_expiry")
    single = sorted(((k, g) for k, g in gains.items() if k != o), key=lambda kg: -kg[1])
    if expiry and len(single) > 1:
        floor = c.gain(expiry, "execution_ms")
        figures["floor"] = floor
        figures["above"] = [{"setup": k, "gain": g} for k, g in single if g > floor]
        figures["within"] = [{"setup": k, "gain": g} for k, g in single if g <= floor]
    return figures


def _hours(window: str) -> float:
    """`1h` -> 1, `180d` -> 4320."""
    return float(window[:-1]) * {"h": 1, "d": 24}[window[-1]]


def _growth_windows(growth: pd.DataFrame) -> tuple[str, str]:
    """(wide, narrow) window of a growth.csv, from its `planning_ms_median_<window>` columns."""
    prefix = "planning_ms_median_"
    windows = [col[len(prefix) :] for col in growth.columns if col.startswith(prefix)]
    if len(windows) != 2:
        raise ValueError(f"growth.csv: expected two windows, found {windows}")
    narrow, wide = sorted(windows, key=_hours)
    return wide, narrow
