"""Effects with confidence intervals: the ratio b over a per cell, a bootstrap interval around
it, and whether it recurs across session pairs.

A single pair of sessions can differ by more than a setting does (sessions drift: one of five
same-config sessions planned 15 to 25% faster than the others), so several sessions per side
are pooled, and an effect is flagged only when

- its pooled interval lies wholly beyond the threshold: the whole interval above 1 + t (slower)
  or below 1 - t (faster), not merely off 1; and
- it recurs: in every session pair, that pair's own ratio of medians lies beyond the threshold
  on the same side.

The interval is scipy's percentile bootstrap with a fixed seed, so a table is reproducible.

A geometric mean over a workload's queries has two intervals: `geomean_interval` holds the
queries fixed and resamples the measurement noise only (how sure the figure is for these
queries), `query_geomean_interval` resamples the queries as well (how far it carries to another
draw of queries like them). A claim that one setup is faster than another over a workload rests
on the second.

Two designs, two estimators:

- independent (sessions of a and sessions of b, as `icelab sessions` runs them): the ratio of
  medians, each side resampled on its own;
- paired (two variants measured in the same rounds of the same session, `--variants` of one run):
  the per-round ratios b_r / a_r, order-balanced. Both executions of a round ran seconds apart,
  so what drifts over a session (a query still getting faster over its first ten executions)
  cancels in the ratio. The rounds rotate which variant goes first, and the first pays more, so
  the ratios fall in two groups; the estimate is the geometric mean of the two groups' medians,
  in which that penalty cancels, and each group is resampled on its own. The ratio of medians of
  the same values keeps drift and penalty in its spread.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy.stats import bootstrap

CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 20261124
# Below this many values per side a resampled median takes too few distinct values for its
# percentiles to mean anything; such cells get no interval and no flag.
MIN_VALUES = 5
PAIRED, INDEPENDENT = "paired", "independent"
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
    return _percentile_interval((a, b), _ratio, confidence, seed)


def _percentile_interval(
    samples: tuple[np.ndarray, ...], statistic: Callable, confidence: float, seed: int
) -> tuple[float, float]:
    """scipy's percentile bootstrap, each sample resampled on its own, a fixed seed."""
    with warnings.catch_warnings():
        # Identical values give a degenerate (zero-width) interval, which is the right answer.
        warnings.simplefilter("ignore")
        res = bootstrap(
            samples,
            statistic,
            paired=False,
            vectorized=True,
            confidence_level=confidence,
            n_resamples=RESAMPLES,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _balanced(first_a: np.ndarray, first_b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.sqrt(np.median(first_a, axis=axis) * np.median(first_b, axis=axis))


def strata(ratios: np.ndarray, a_first: np.ndarray) -> list[np.ndarray]:
    """The per-round ratios split by which variant went first: both strata when each has at
    least two rounds, else all ratios as one (a design that did not alternate)."""
    split = [ratios[a_first], ratios[~a_first]]
    return split if min(len(x) for x in split) >= 2 else [ratios]


def order_balanced(ratios: np.ndarray, a_first: np.ndarray) -> float:
    """The geometric mean of the median ratio of the rounds a went first and of those b went
    first: a first-execution penalty p multiplies one stratum's ratios by p and divides the
    other's, so it cancels, whatever its size."""
    parts = strata(ratios, a_first)
    return float(_balanced(*parts)) if len(parts) == 2 else float(np.median(parts[0]))


def paired_interval(
    ratios: np.ndarray, a_first: np.ndarray, confidence: float = CONFIDENCE, seed: int = SEED
) -> tuple[float, float]:
    """Bootstrap interval of `order_balanced`, each stratum resampled on its own (the order was
    fixed by design, not drawn); (nan, nan) below MIN_VALUES rounds."""
    if len(ratios) < MIN_VALUES:
        return float("nan"), float("nan")
    parts = strata(ratios, a_first)
    return _percentile_interval(tuple(parts), _balanced if len(parts) == 2 else np.median, confidence, seed)


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


def _empty(estimator: str) -> dict[str, float | int | str]:
    nan = float("nan")
    return {"ratio": nan, "ci_low": nan, "ci_high": nan, "pairs": 0, "recurring": 0, "estimator": estimator}


def _verdict(
    out: dict[str, float | int | str], pair_ratios: list[float], threshold: float
) -> dict[str, float | int | str]:
    """The effect of a cell from its interval and each session pair's own ratio."""
    low, high = float(out["ci_low"]), float(out["ci_high"])
    if np.isnan(low):
        return out | {"effect": TOO_FEW}
    out["pairs"] = len(pair_ratios)
    # The interval wholly beyond the threshold on one side: both ends on the same side.
    direction = side(low, threshold) if side(low, threshold) == side(high, threshold) else 0
    if direction == 0:
        return out | {"effect": NO_EFFECT}
    out["recurring"] = sum(side(r, threshold) == direction for r in pair_ratios)
    if out["recurring"] < len(pair_ratios):
        return out | {"effect": NOT_RECURRING}
    return out | {"effect": SLOWER if direction > 0 else FASTER}


def paired_effect(
    rounds: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    threshold: float,
    confidence: float = CONFIDENCE,
) -> dict[str, float | int | str]:
    """One cell's effect from each session's values of a and b aligned round by round, with
    whether a ran first in that round.

    Returns:
        As `effect`, with ratio the order-balanced per-round ratio (`order_balanced`) pooled
        over the sessions, and a session's own ratio (for recurrence) the same over its rounds.
    """
    out = _empty(PAIRED)
    sessions = []
    for a, b, a_first in rounds:
        ratios = np.asarray(b, float) / np.asarray(a, float)
        keep = np.isfinite(ratios)
        if keep.any():
            sessions.append((ratios[keep], np.asarray(a_first, bool)[keep]))
    if not sessions:
        return out | {"effect": MISSING}
    ratios = np.concatenate([r for r, _ in sessions])
    a_first = np.concatenate([f for _, f in sessions])
    out["ratio"] = order_balanced(ratios, a_first)
    out["ci_low"], out["ci_high"] = paired_interval(ratios, a_first, confidence)
    return _verdict(out, [order_balanced(r, f) for r, f in sessions], threshold)


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
    out = _empty(INDEPENDENT)
    if len(pooled_a) == 0 or len(pooled_b) == 0:
        return out | {"effect": MISSING}
    out["ratio"] = float(_ratio(pooled_a, pooled_b)) if np.median(pooled_a) else float("nan")
    out["ci_low"], out["ci_high"] = ratio_interval(pooled_a, pooled_b, confidence)
    pairs = [
        (a[i], b[j]) for i, j in session_pairs(len(a), len(b)) if len(a[i]) and len(b[j]) and np.median(a[i])
    ]
    return _verdict(out, [float(_ratio(x, y)) for x, y in pairs], threshold)


def geomean_interval(
    cells: Sequence[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]],
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """The geometric mean over queries of sum(medians of b's parts) / sum(medians of a's parts),
    and its bootstrap interval.

    Each cell is one query: (a's parts, b's parts), a part being the values of one timing (the
    planning values alone, or planning and execution, whose medians add up to the total as the
    charts stack them). The queries are the fixed workload, not a sample of queries: only the
    measurement noise is resampled, each part of each cell on its own. (nan, nan) interval when a
    part has fewer than MIN_VALUES values.
    """
    arrays = [np.asarray(x, float) for a, b in cells for x in (*a, *b)]
    shape = [(len(a), len(b)) for a, b in cells]

    def geomean(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        logs, i = [], 0
        for n_a, n_b in shape:
            a = sum(np.median(s, axis=axis) for s in samples[i : i + n_a])
            b = sum(np.median(s, axis=axis) for s in samples[i + n_a : i + n_a + n_b])
            logs.append(np.log(b / a))
            i += n_a + n_b
        return np.exp(np.mean(logs, axis=0))

    if not arrays or any(len(x) == 0 for x in arrays):
        return float("nan"), float("nan"), float("nan")
    estimate = float(geomean(*arrays))
    if min(len(x) for x in arrays) < MIN_VALUES:
        return estimate, float("nan"), float("nan")
    return (estimate, *_percentile_interval(tuple(arrays), geomean, confidence, seed))


def _parts_sum(parts: Sequence[np.ndarray], rng: np.random.Generator | None, resamples: int) -> np.ndarray:
    """Sum over parts of each part's median: `resamples` bootstrap replicates (each part resampled on its
    own), or, without `rng` or below MIN_VALUES values in a part, that part's median in every replicate."""
    total = np.zeros(resamples)
    for values in parts:
        if rng is None or len(values) < MIN_VALUES:
            total += np.median(values)
        else:
            total += np.median(rng.choice(values, size=(resamples, len(values))), axis=1)
    return total


def query_geomean_interval(
    cells: Sequence[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]],
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    resamples: int = RESAMPLES,
) -> tuple[float, float, float]:
    """`geomean_interval`'s estimate with a two-level bootstrap interval: the queries resampled too.

    Each replicate draws as many queries as there are cells, with replacement, and for each drawn
    query one replicate of its ratio with the measurement noise resampled (each part of each side on
    its own, as `geomean_interval`; a part of fewer than MIN_VALUES values stays at its median); the
    interval is the percentile interval of the replicates' geometric means. (nan, nan) interval below
    MIN_VALUES queries: too few to resample.
    """
    pairs = [([np.asarray(x, float) for x in a], [np.asarray(x, float) for x in b]) for a, b in cells]
    if not pairs or any(len(x) == 0 for a, b in pairs for x in (*a, *b)):
        return float("nan"), float("nan"), float("nan")
    estimate = float(
        np.exp(np.mean([np.log(_parts_sum(b, None, 1) / _parts_sum(a, None, 1)) for a, b in pairs]))
    )
    if len(pairs) < MIN_VALUES:
        return estimate, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    # queries x replicates: each query's log ratio with its measurement noise resampled
    noise = np.array(
        [np.log(_parts_sum(b, rng, resamples) / _parts_sum(a, rng, resamples)) for a, b in pairs]
    )
    drawn = rng.integers(0, len(pairs), size=(resamples, len(pairs)))
    replicates = np.exp(noise[drawn, np.arange(resamples)[:, None]].mean(axis=1))
    tail = (1 - confidence) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    return estimate, float(low), float(high)
