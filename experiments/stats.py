"""Medians, spreads and growth ratios from a run's measurements (warm-ups excluded).

A median is flagged "may be unstable" (as pyperf does) when its interquartile range is wide
compared with it: the figure then says more about the machine than about the table.
"""

from __future__ import annotations

import pandas as pd

KEYS = ["query_id", "variant", "format", "profile", "window", "window_hours"]
TIMINGS = ["planning_ms", "iceberg_planning_ms", "execution_ms", "total_ms"]
# Deterministic per case: the median is simply the value.
COUNTS = [
    "manifests_total",
    "manifests_scanned",
    "files_scanned",
    "files_skipped",
    "partitions_scanned",
    "bytes_scanned",
    "scan_nodes",
]


def _spread(values: pd.Series) -> pd.Series:
    values = values.dropna()
    if values.empty:
        return pd.Series({"n": 0, "median": None, "q1": None, "q3": None, "iqr": None})
    q1, med, q3 = values.quantile([0.25, 0.5, 0.75])
    return pd.Series({"n": len(values), "median": med, "q1": q1, "q3": q3, "iqr": q3 - q1})


def summarize(measurements: pd.DataFrame, unstable_iqr: float) -> pd.DataFrame:
    """One row per (query, variant, window): n, median, q1, q3, iqr and `unstable` per timing,
    and the scan counts."""
    ok = measurements[(~measurements["warmup"]) & (measurements["status"] == "ok")]
    groups = ok.groupby(KEYS, sort=False, dropna=False)
    parts = []
    for timing in TIMINGS:
        spread = groups[timing].apply(_spread).unstack()
        spread["unstable"] = (spread["iqr"] / spread["median"]) > unstable_iqr
        spread.columns = [f"{timing}_{c}" for c in spread.columns]
        parts.append(spread)
    parts.append(groups[COUNTS].median())
    errors = measurements[measurements["status"] != "ok"].groupby(KEYS, sort=False, dropna=False).size()
    summary = pd.concat(parts, axis=1)
    summary["errors"] = errors.reindex(summary.index).fillna(0).astype(int)
    return summary.reset_index().sort_values(["query_id", "variant", "window_hours"], ignore_index=True)


def growth(summary: pd.DataFrame, wide: str, narrow: str) -> pd.DataFrame:
    """Per (query, variant): median planning at the `wide` window over that at the `narrow` one,
    beside what explains it (manifests read, files and partitions listed)."""
    cols = [
        "planning_ms_median",
        "iceberg_planning_ms_median",
        "manifests_scanned",
        "files_scanned",
        "partitions_scanned",
    ]
    by = summary.set_index(["query_id", "variant", "window"])[cols]
    out = by.xs(wide, level="window").merge(
        by.xs(narrow, level="window"), left_index=True, right_index=True, suffixes=(f"_{wide}", f"_{narrow}")
    )
    out["planning_ratio"] = out[f"planning_ms_median_{wide}"] / out[f"planning_ms_median_{narrow}"]
    out["iceberg_planning_ratio"] = (
        out[f"iceberg_planning_ms_median_{wide}"] / out[f"iceberg_planning_ms_median_{narrow}"]
    )
    return out.reset_index()
