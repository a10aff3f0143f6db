"""How a table's day partitions are spread across its manifests (the study's Figures 6 and 7).

Two counts per day partition, both from the current snapshot's data manifests:
- exact: manifests holding at least one live entry of that day (`entries` metadata table,
  where `input_file_name()` names each entry's manifest);
- bounds: manifests whose partition bounds include that day, which is what planning must open
  for a one-day filter (partition-summary pruning keeps them).
"""

from __future__ import annotations

import pandas as pd
from pyspark.sql import SparkSession

from icelab.datagen.summary import bound_day, partition_day

STATS = ("min", "max", "mean", "median", "stdev", "p60", "p90", "p99")


def manifests(spark: SparkSession, table: str) -> pd.DataFrame:
    """Per data manifest: path, bytes, live entries, partition bounds and span in days."""
    rows = spark.sql(
        f"SELECT path, length, added_data_files_count + existing_data_files_count AS entries, "
        f"partition_summaries AS ps FROM {table}.manifests WHERE content = 0"
    ).collect()
    out = []
    for r in rows:
        bounds = r.ps[0]
        lo = bound_day(bounds.lower_bound) if bounds.lower_bound else None
        hi = bound_day(bounds.upper_bound) if bounds.upper_bound else None
        span = (hi - lo).days + 1 if lo and hi else 0
        out.append(
            {
                "path": r.path,
                "length": r.length,
                "entries": r.entries,
                "lower": lo,
                "upper": hi,
                "span_days": span,
            }
        )
    return pd.DataFrame(out, columns=["path", "length", "entries", "lower", "upper", "span_days"])


def partition_counts(
    spark: SparkSession, table: str, manifest_frame: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per day partition: `exact` and `bounds` manifest counts (see the module docstring).

    `manifest_frame` is the table's `manifests()` when the caller already has it.
    """
    entries = spark.sql(
        f"SELECT data_file.partition AS p, input_file_name() AS manifest FROM {table}.entries "
        f"WHERE status < 2 AND data_file.content = 0"  # 0 existing, 1 added; 2 is a delete
    ).collect()
    exact = (
        pd.DataFrame(
            {"day": [partition_day(r.p[0]) for r in entries], "manifest": [r.manifest for r in entries]}
        )
        .groupby("day")["manifest"]
        .nunique()
    )
    frame = manifests(spark, table) if manifest_frame is None else manifest_frame
    ranges = frame.dropna(subset=["lower", "upper"])
    bounds = {day: int(((ranges.lower <= day) & (ranges.upper >= day)).sum()) for day in exact.index}
    frame = pd.DataFrame(
        {"day": exact.index, "exact": exact.values, "bounds": [bounds[d] for d in exact.index]}
    )
    return frame.sort_values("day", ignore_index=True)


def statistics(values: pd.Series) -> dict[str, float]:
    """min, max, mean, median, stdev (sample), p60, p90, p99 of a count per partition."""
    v = values.astype(float)
    found = {
        "min": v.min(),
        "max": v.max(),
        "mean": v.mean(),
        "median": v.median(),
        "stdev": v.std() if len(v) > 1 else 0.0,
        "p60": v.quantile(0.60),
        "p90": v.quantile(0.90),
        "p99": v.quantile(0.99),
    }
    return {k: float(x) for k, x in found.items()}


def health_stats(
    exact: pd.Series, bounds: pd.Series, span: pd.Series, manifest_bytes: pd.Series, entries: pd.Series
) -> dict[str, dict[str, float]]:
    """What a health verdict judges: `statistics` of the manifests per partition (exact and
    bounds) and, per data manifest, of its span, size in KiB and entries."""
    return {
        "exact": statistics(exact),
        "bounds": statistics(bounds),
        "span": statistics(span),
        "manifest_kb": statistics(manifest_bytes / 1024),
        "manifest_entries": statistics(entries),
    }


def stat_rows(
    stats: dict[str, dict[str, float]], labels: dict[str, str], indent: int, width: int
) -> list[str]:
    """`health_stats` as console rows under a header of the statistics' names. `labels` names the
    two sections (`partition`, `manifest`) and each statistic's row (its key in `stats`)."""
    row = " " * indent + f"{{:<{width}}}" + " {:>8}" * 8
    lines = [row.format(labels["partition"], *stats["exact"])]
    lines += [row.format(labels[k], *(f"{v:.1f}" for v in stats[k].values())) for k in ("exact", "bounds")]
    lines.append(row.format(labels["manifest"], *[""] * 8))
    lines += [
        row.format(labels[k], *(f"{v:.2f}" for v in stats[k].values()))
        for k in ("span", "manifest_kb", "manifest_entries")
    ]
    return lines
