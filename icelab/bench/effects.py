"""Effects with confidence intervals: the ratio of medians (b over a) per cell, a bootstrap
interval around it, and whether it recurs across session pairs.

A single pair of sessions can differ by more than a setting does (sessions drift: one of five
same-config sessions planned 15 to 25% faster than the others), so several sessions per side
are pooled, and an effect is flagged only when

- its pooled interval lies wholly beyond the threshold: the whole interval above 1 + t (slower)
  or below 1 - t (faster), not merely off 1; and
- it recurs: in every session pair, that pair's own ratio of medians lies beyond the threshold
  on the same side.

The interval is scipy's percentile bootstrap, each side resampled on its own (the two samples
are independent runs, not pairs), with a fixed seed so a table is reproducible.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.stats import bootstrap

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 20261124
# Below this many values per side a resampled median takes too few distinct values for its
# percentiles to mean anything; such cells get no interval and no flag.
MIN_VALUES = 5
SLOWER, FASTER, NO_EFFECT, NOT_RECURRING, TOO_FEW, MISSING = (
    "slower",
    "faster",
    "no effect shown",
    "not recurring",
    "too few values",
    "missing",
)


def _ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(b, axis=axis) / np.median(a, axis=axis)


def ratio_interval(
    a: np.ndarray, b: np.ndarray, confidence: float = CONFIDENCE, seed: int = SEED
) -> tuple[float, float]:
    """Bootstrap interval of median(b) / median(a); (nan, nan) below MIN_VALUES per side."""
    if len(a) < MIN_VALUES or len(b) < MIN_VALUES or np.median(a) == 0:
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        # Identical values give a degenerate (zero-width) interval, which is the right answer.
        warnings.simplefilter("ignore")
        res = bootstrap(
            (a, b),
            _ratio,
            paired=False,
            vectorized=True,
            confidence_level=confidence,
            n_resamples=RESAMPLES,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def session_pairs(n_a: int, n_b: int) -> list[tuple[int, int]]:
    """Which sessions of a and b are compared with each other: in order when both sides have as
    many (interleaved A B A B sessions pair up), otherwise every combination."""
    if n_a == n_b:
        return [(i, i) for i in range(n_a)]
    return list(itertools.product(range(n_a), range(n_b)))


def side(ratio: float, threshold: float) -> int:
    """+1 when `ratio` is at least 1 + threshold, -1 when at most 1 - threshold, else 0."""
    if np.isnan(ratio):
        return 0
    if ratio >= 1 + threshold:
        return 1
    if ratio <= 1 - threshold:
        return -1
    return 0


def effect(
    a: Sequence[np.ndarray], b: Sequence[np.ndarray], threshold: float, confidence: float = CONFIDENCE
) -> dict[str, float | int | str]:
    """One cell's effect from the values of each session of a and of b.

    Returns:
        ratio (pooled medians, b over a), ci_low, ci_high, pairs (session pairs compared),
        recurring (pairs whose own ratio lies beyond the threshold on the flagged side), effect.
    """
    pooled_a = np.concatenate([np.asarray(x, float) for x in a]) if a else np.array([])
    pooled_b = np.concatenate([np.asarray(x, float) for x in b]) if b else np.array([])
    out: dict[str, float | int | str] = {
        "ratio": float("nan"),
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        "pairs": 0,
        "recurring": 0,
    }
    if len(pooled_a) == 0 or len(pooled_b) == 0:
        return out | {"effect": MISSING}
    out["ratio"] = float(_ratio(pooled_a, pooled_b)) if np.median(pooled_a) else float("nan")
    low, high = ratio_interval(pooled_a, pooled_b, confidence)
    out["ci_low"], out["ci_high"] = low, high
    if np.isnan(low):
        return out | {"effect": TOO_FEW}
    pairs = [
        (a[i], b[j]) for i, j in session_pairs(len(a), len(b)) if len(a[i]) and len(b[j]) and np.median(a[i])
    ]
    out["pairs"] = len(pairs)
    # The interval wholly beyond the threshold on one side: both ends on the same side.
    direction = side(low, threshold) if side(low, threshold) == side(high, threshold) else 0
    if direction == 0:
        return out | {"effect": NO_EFFECT}
    out["recurring"] = sum(side(float(_ratio(x, y)), threshold) == direction for x, y in pairs)
    if out["recurring"] < len(pairs):
        return out | {"effect": NOT_RECURRING}
    return out | {"effect": SLOWER if direction > 0 else FASTER}
