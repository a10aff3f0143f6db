"""Where a metadata-scale state's data files fall: files per (ingest commit, day), and how a
manifest rewrite groups days. Pure numpy, deterministic for a seed.

As a streaming ingest leaves them, every commit touches nearly every day of the span: its own
day gets most of its files, the days before it get late data and any day gets rows from devices
with wrong clocks (the real generator's late_fraction, late_max_days and clock_skew_fraction).
A production writer writes several files per partition and commit, so a commit here writes
one file to each day it touches (each day with probability `touch`) and its remaining files
over the days by those weights.
"""

from __future__ import annotations

import math

import numpy as np


def day_weights(commit: int, commits: int, days: int, late: float, late_days: int, skew: float) -> np.ndarray:
    """The share of one commit's rows per day: on time, late (the `late_days` before), skewed."""
    weights = np.full(days, skew / days)
    own = min(days - 1, int((commit + 0.5) * days / commits))
    first = max(0, own - late_days)
    if own > first:
        weights[first:own] += late / (own - first)
    else:
        weights[own] += late
    weights[own] += 1.0 - late - skew
    return weights / weights.sum()


def file_counts(
    data_files: int,
    commits: int,
    days: int,
    seed: int,
    late: float = 0.10,
    late_days: int = 60,
    skew: float = 0.02,
    touch: float = 0.97,
) -> np.ndarray:
    """Files per (commit, day), shape (commits, days), summing to `data_files`.

    Raises:
        ValueError: when there are fewer files than commits touch days (no room for the layout).
    """
    rng = np.random.default_rng(seed)
    per_commit = np.full(commits, data_files // commits)
    per_commit[: data_files % commits] += 1
    counts = np.zeros((commits, days), dtype=np.int64)
    for c in range(commits):
        touched = rng.random(days) < touch
        if touched.sum() > per_commit[c]:
            raise ValueError(
                f"{data_files} files over {commits} commits: fewer than the {int(touched.sum())} days a commit touches"
            )
        counts[c] = touched
        weights = day_weights(c, commits, days, late, late_days, skew)
        counts[c] += rng.multinomial(per_commit[c] - touched.sum(), weights)
    return counts


def range_starts(per_day: np.ndarray, ranges: int) -> list[int]:
    """The first day of each range when `per_day` entries are range-partitioned into `ranges`.

    Iceberg's rewrite_manifests range-partitions entries by partition value: a day is never
    split, so a day goes to the range its middle entry falls in, and empty ranges vanish.
    """
    total = int(per_day.sum())
    middles = np.cumsum(per_day) - per_day / 2.0
    owner = np.minimum((middles * ranges / total).astype(int), ranges - 1)
    return [d for d in range(len(per_day)) if d == 0 or owner[d] != owner[d - 1]]


def clustered_plan(per_day: np.ndarray, entry_bytes: float, target_bytes: int) -> tuple[list[int], int]:
    """(range start days, entries per manifest) for a rewrite at `target_bytes`.

    rewrite_manifests makes ceil(total bytes / target) ranges, then rolls a new manifest within
    a range once the one it writes reaches the target.
    """
    ranges = max(1, math.ceil(per_day.sum() * entry_bytes / target_bytes))
    per_manifest = max(1, int(target_bytes // entry_bytes))
    return range_starts(per_day, ranges), per_manifest


def manifest_days(counts: np.ndarray) -> np.ndarray:
    """Days each as-ingested manifest (one per commit) spans."""
    return (counts > 0).sum(axis=1)
