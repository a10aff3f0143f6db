"""Medians, spreads and growth ratios from a run's measurements (warm-ups excluded).

A median is flagged "may be unstable" when its interquartile range is wide compared with it
(IQR / median above `protocol.unstable_iqr`): the figure then says more about the machine than
about the table. pyperf warns on a wide spread too, by its own rule (standard deviation above a
tenth of the mean); this one is icelab's.
"""

from __future__ import annotations

import statistics

import pandas as pd

from icelab.analysis.rows import counted

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


def _spread(groups: pd.core.groupby.SeriesGroupBy) -> pd.DataFrame:
    """n, median, q1, q3 and iqr of each group's values (missing values dropped; linear
    interpolation, as `Series.quantile`), computed for every group at once."""
    quartiles = groups.quantile([0.25, 0.5, 0.75]).unstack()
    spread = pd.DataFrame(
        {
            "n": groups.count().astype(float),
            "median": quartiles[0.5],
            "q1": quartiles[0.25],
            "q3": quartiles[0.75],
        }
    )
    spread["iqr"] = spread["q3"] - spread["q1"]
    return spread


def summarize(measurements: pd.DataFrame, unstable_iqr: float, keep_faulted: bool = False) -> pd.DataFrame:
    """One row per (query, variant, window): n, median, q1, q3, iqr and `unstable` per timing
    over the rows that count (`rows.counted`, faulted rows in only with `keep_faulted`), the scan
    counts, and how many rows were left out as `errors` and as `faulted`. A cell whose every
    measured row met a fault stays, with n = 0 and no median."""
    # A run without one format has none of that format's metric columns (e.g. Iceberg only).
    absent = [c for c in TIMINGS + COUNTS if c not in measurements.columns]
    measurements = measurements.assign(**dict.fromkeys(absent, float("nan")))
    ok = counted(measurements, keep_faulted)
    ok = ok.astype(dict.fromkeys(TIMINGS, "float64"))  # a column of None is object-typed
    groups = ok.groupby(KEYS, sort=False, dropna=False)
    parts = []
    for timing in TIMINGS:
        spread = _spread(groups[timing])
        spread["unstable"] = (spread["iqr"] / spread["median"]) > unstable_iqr
        spread.columns = [f"{timing}_{c}" for c in spread.columns]
        parts.append(spread)
    parts.append(groups[COUNTS].median())
    errors = measurements[measurements["status"] != "ok"].groupby(KEYS, sort=False, dropna=False).size()
    measured = counted(measurements, keep_faulted=True).groupby(KEYS, sort=False, dropna=False).size()
    cells = measured.index.union(ok.groupby(KEYS, sort=False, dropna=False).size().index, sort=False)
    summary = pd.concat(parts, axis=1).reindex(cells)
    for timing in TIMINGS:
        summary[f"{timing}_n"] = summary[f"{timing}_n"].fillna(0.0)
        summary[f"{timing}_unstable"] = summary[f"{timing}_unstable"].fillna(False).astype(bool)
    summary["errors"] = errors.reindex(summary.index).fillna(0).astype(int)
    kept = ok.groupby(KEYS, sort=False, dropna=False).size().reindex(summary.index).fillna(0)
    summary["faulted"] = (measured.reindex(summary.index).fillna(0) - kept).astype(int)
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


PARTS = ["planning_ms", "execution_ms", "total_ms"]


def ratios(summary: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (query, variant): each median timing over the `reference` variant's, same query.

    A ratio above 1 means the variant took longer than the reference. The total is the median
    planning plus the median execution, as the charts stack them: when only some rounds execute,
    the median of `total_ms` would rest on those rounds' planning alone.
    """
    cols = [f"{t}_median" for t in PARTS]
    med = summary.set_index(["query_id", "variant"])[cols].astype(float)
    med["total_ms_median"] = med["planning_ms_median"] + med["execution_ms_median"]
    ref = med.xs(reference, level="variant")
    out = med.div(ref, level="query_id")
    out.columns = [f"{t}_ratio" for t in PARTS]
    return out.reset_index()


def gains(summary: pd.DataFrame, initial: str) -> pd.DataFrame:
    """Per Iceberg variant: geometric means of its ratios to the `initial` variant (gains.csv)."""
    iceberg = summary[summary["format"] == "iceberg"]
    return geomeans(ratios(iceberg, initial), iceberg)


def _geomean(values: pd.Series) -> float | None:
    values = values.dropna()
    values = values[values > 0]
    return statistics.geometric_mean(values) if len(values) else None


def geomeans(per_query: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per variant: the geometric mean over queries of each ratio, the worst query by total,
    and the share of the workload's time spent planning."""
    rows = []
    for variant, part in per_query.groupby("variant", sort=False):
        worst = part.loc[part["total_ms_ratio"].idxmax()] if part["total_ms_ratio"].notna().any() else None
        mine = summary[summary["variant"] == variant]
        planning, execution = mine["planning_ms_median"].sum(), mine["execution_ms_median"].sum()
        rows.append(
            {
                "variant": variant,
                "queries": int(part["total_ms_ratio"].notna().sum()),
                **{f"{t}_geomean": _geomean(part[f"{t}_ratio"]) for t in PARTS},
                "worst_query": None if worst is None else worst["query_id"],
                "worst_total_ratio": None if worst is None else worst["total_ms_ratio"],
                "planning_share": planning / (planning + execution) if planning + execution else None,
            }
        )
    return pd.DataFrame(rows)


def geomean_intervals(
    measurements: pd.DataFrame, reference: str, confidence: float = 0.95, over_queries: bool = False
) -> pd.DataFrame:
    """Per variant other than `reference`: the geometric mean over queries of its ratio to the
    reference (planning, execution, total as median planning + median execution), with a
    bootstrap interval of the measurement noise, the queries fixed (`effect_intervals.geomean_interval`),
    or with `over_queries` of the queries and the noise (`effect_intervals.query_geomean_interval`):
    `<part>_geomean`, `<part>_ci_low`, `<part>_ci_high`. Queries the reference lacks, or with failed
    rows only, are left out."""
    from icelab.analysis import effect_intervals

    bootstrap = effect_intervals.query_geomean_interval if over_queries else effect_intervals.geomean_interval

    ok = counted(measurements)
    values = {
        key: {t: g[t].dropna().to_numpy(float) for t in ("planning_ms", "execution_ms")}
        for key, g in ok.groupby(["query_id", "window", "variant"], sort=False)
    }
    parts = {"planning_ms": ["planning_ms"], "execution_ms": ["execution_ms"]}
    parts["total_ms"] = ["planning_ms", "execution_ms"]
    rows = []
    for variant in dict.fromkeys(ok["variant"]):
        if variant == reference:
            continue
        row: dict[str, object] = {"variant": variant}
        for part, timings in parts.items():
            cells = [
                ([values[(q, w, reference)][t] for t in timings], [v[t] for t in timings])
                for (q, w, var), v in values.items()
                if var == variant and (q, w, reference) in values
            ]
            est, low, high = bootstrap(cells, confidence)
            row |= {f"{part}_geomean": est, f"{part}_ci_low": low, f"{part}_ci_high": high}
        rows.append(row)
    return pd.DataFrame(rows)
