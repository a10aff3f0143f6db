"""Two sides of measurements compared cell by cell: per (query, variant, window) and timing, the
change of the median and a Mann-Whitney U test over the measured repetitions, flagging
regressions and improvements; and the ratio of medians with a bootstrap interval, pooled over
several sessions per side (`effect_intervals`).

A change is flagged only when it is both significant (p < alpha) and large enough (|change| >=
min-change). With few repetitions the exact test cannot reach alpha at all: 3 against 3 gives at
best p = 0.1, so such cases are labelled `too few repetitions`, never silently `no change`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, mannwhitneyu

from icelab.analysis import effect_intervals
from icelab.analysis.rows import counted

KEYS = ["query_id", "variant", "window"]
TIMINGS = ["planning_ms", "execution_ms", "total_ms"]
STATS = ["n_a", "n_b", "median_a", "median_b", "change", "p_value", "min_p"]
EFFECT_COLUMNS = ["ratio", "ci_low", "ci_high", "pairs", "recurring", "estimator", "effect"]
REGRESSION, IMPROVEMENT, NO_CHANGE = "regression", "improvement", "no change"
TOO_FEW, MISSING = "too few repetitions", "missing"
MOVED = [effect_intervals.SLOWER, effect_intervals.FASTER, effect_intervals.NOT_RECURRING]


def min_p(n: int, m: int) -> float:
    """The smallest two-sided p-value the exact Mann-Whitney U test can give for sizes n and m:
    both tails of the single most extreme ordering, 2 / C(n+m, n)."""
    if n == 0 or m == 0:
        return 1.0
    return min(1.0, 2 / math.comb(n + m, n))


def reps_needed(alpha: float) -> int:
    """The fewest repetitions per side (equal sizes) with which the test can reach p < alpha."""
    n = 1
    while min_p(n, n) >= alpha:
        n += 1
    return n


def _p_value(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    if np.array_equal(np.sort(a), np.sort(b)):
        return 1.0  # identical samples: scipy may return nan when every value ties
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    return 1.0 if np.isnan(p) else float(p)


def verdict(n_a: int, n_b: int, change: float, p: float, alpha: float, min_change: float) -> str:
    """The label of one comparison."""
    if n_a == 0 or n_b == 0:
        return MISSING
    if min_p(n_a, n_b) >= alpha:
        return TOO_FEW
    if p < alpha and not np.isnan(change) and abs(change) >= min_change:
        return REGRESSION if change > 0 else IMPROVEMENT
    return NO_CHANGE


def adjust(p_values: np.ndarray, correction: str) -> np.ndarray:
    """p-values corrected for testing many cells at once: `bh` (Benjamini-Hochberg, the false
    discovery rate over the cells) or `none`."""
    if correction == "none" or len(p_values) == 0:
        return p_values
    return false_discovery_control(p_values, method="bh")


def _sessions(runs: pd.DataFrame | Sequence[pd.DataFrame]) -> list[dict[tuple, pd.DataFrame]]:
    """The measured rows of each session of one side, grouped by cell."""
    frames = [runs] if isinstance(runs, pd.DataFrame) else list(runs)
    return [dict(tuple(counted(f).groupby(KEYS, sort=False))) for f in frames]


def _values(sessions: list[dict[tuple, pd.DataFrame]], key: tuple, timing: str) -> list[np.ndarray]:
    return [s[key][timing].dropna().to_numpy(float) if key in s else np.array([]) for s in sessions]


def _rounds(
    sessions_a: list[dict[tuple, pd.DataFrame]],
    sessions_b: list[dict[tuple, pd.DataFrame]],
    key: tuple,
    timing: str,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per session, the values of a and b of one cell aligned by repetition (the rounds both ran),
    and whether a was measured first in each of those rounds."""
    out = []
    columns = ["repetition", "measured_utc", timing]
    for sa, sb in zip(sessions_a, sessions_b, strict=True):
        if key not in sa or key not in sb:
            continue
        both = pd.merge(
            sa[key][columns].dropna(), sb[key][columns].dropna(), on="repetition", suffixes=("_a", "_b")
        )
        a_first = pd.to_datetime(both["measured_utc_a"]) < pd.to_datetime(both["measured_utc_b"])
        out.append(
            (both[f"{timing}_a"].to_numpy(float), both[f"{timing}_b"].to_numpy(float), a_first.to_numpy(bool))
        )
    return out


def compare(
    a: pd.DataFrame | Sequence[pd.DataFrame],
    b: pd.DataFrame | Sequence[pd.DataFrame],
    alpha: float = 0.05,
    min_change: float = 0.10,
    correction: str = "bh",
    confidence: float = effect_intervals.CONFIDENCE,
    paired: bool = False,
) -> pd.DataFrame:
    """One row per (query, variant, window, timing): sizes, medians, relative change (b over a,
    positive = slower), p-value, p-value adjusted over every testable cell, and verdict; then
    the ratio of medians with its bootstrap interval and the effect (`icelab.analysis.effect_intervals`).

    `a` and `b` are one run's measurements or several sessions' each: the values are pooled per
    side, and an effect must also recur in every session pair. With `paired`, session i of a and
    of b are the same session (two variants of one run): the effect then comes from the per-round
    ratios, balanced over which variant went first (`effect_intervals.paired_effect`). Dozens of cells are
    tested at once; without a correction, 5% of unchanged cells would be flagged at alpha 0.05 by chance.
    """
    sessions_a, sessions_b = _sessions(a), _sessions(b)
    keys = [k for s in (*sessions_a, *sessions_b) for k in s]
    rows = []
    for key in list(dict.fromkeys(keys)):
        for timing in TIMINGS:
            per_a, per_b = _values(sessions_a, key, timing), _values(sessions_b, key, timing)
            va, vb = np.concatenate(per_a), np.concatenate(per_b)
            if len(va) == 0 and len(vb) == 0:
                continue  # a timing neither run took (execution of planned-only rounds)
            med_a = float(np.median(va)) if len(va) else float("nan")
            med_b = float(np.median(vb)) if len(vb) else float("nan")
            change = (med_b - med_a) / med_a if med_a else float("nan")
            p = _p_value(va, vb)
            if paired:
                effect = effect_intervals.paired_effect(
                    _rounds(sessions_a, sessions_b, key, timing), min_change, confidence
                )
            else:
                effect = effect_intervals.effect(
                    [x for x in per_a if len(x)], [x for x in per_b if len(x)], min_change, confidence
                )
            rows.append(
                {
                    **dict(zip(KEYS, key, strict=True)),
                    "timing": timing,
                    "n_a": len(va),
                    "n_b": len(vb),
                    "median_a": med_a,
                    "median_b": med_b,
                    "change": change,
                    "p_value": p,
                    "min_p": min_p(len(va), len(vb)),
                    **effect,
                }
            )
    table = pd.DataFrame(rows, columns=[*KEYS, "timing", *STATS, *EFFECT_COLUMNS])
    testable = (table["n_a"] > 0) & (table["n_b"] > 0) & (table["min_p"] < alpha)
    table["p_adjusted"] = table["p_value"]
    table.loc[testable, "p_adjusted"] = adjust(table.loc[testable, "p_value"].to_numpy(float), correction)
    table["verdict"] = [
        verdict(r.n_a, r.n_b, r.change, r.p_adjusted, alpha, min_change) for r in table.itertuples()
    ]
    return table


def pick(frames: list[pd.DataFrame], variant: str, label: str) -> list[pd.DataFrame]:
    """Each session's rows of one variant, relabelled `label` so that two variants' cells meet.

    Raises:
        LookupError: when a session lacks the variant (the message lists what it has).
    """
    out = []
    for frame in frames:
        rows = frame[frame["variant"] == variant]
        if rows.empty:
            have = ", ".join(dict.fromkeys(frame["variant"]))
            raise LookupError(f"no variant '{variant}' in a compared run (it has: {have})")
        out.append(rows.assign(variant=label))
    return out
