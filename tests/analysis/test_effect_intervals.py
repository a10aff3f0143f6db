"""Effects with intervals: a planted slowdown is found where it was planted and its size is
covered; same against same, a small shift, a one-session fluke and too few values are not flagged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icelab.analysis import effect_intervals
from icelab.analysis.comparison import compare

QUERIES = [f"q{i:02d}" for i in range(1, 13)]


def session(rng: np.random.Generator, planted: dict[str, float] | None = None, reps: int = 8) -> pd.DataFrame:
    """One session's measured rounds: 12 queries, log-normal noise (sigma 0.08) around 1 s,
    with the planted queries' execution slowed by their factor."""
    planted = planted or {}
    rows = []
    for query in QUERIES:
        for rep in range(reps):
            execution = 1000 * rng.lognormal(0, 0.08) * planted.get(query, 1.0)
            planning = 50 * rng.lognormal(0, 0.08)
            rows.append(
                dict(
                    query_id=query,
                    variant="iceberg/optimized",
                    window="1d",
                    repetition=rep,
                    warmup=False,
                    status="ok",
                    planning_ms=planning,
                    execution_ms=execution,
                    total_ms=planning + execution,
                )
            )
    return pd.DataFrame(rows)


def found(table: pd.DataFrame, timing: str = "execution_ms") -> dict[str, str]:
    hits = table[
        (table["timing"] == timing) & table["effect"].isin([effect_intervals.SLOWER, effect_intervals.FASTER])
    ]
    return dict(zip(hits["query_id"], hits["effect"], strict=True))


def test_same_against_same_shows_no_effect_in_three_draws():
    for seed in (1, 2, 3):
        rng = np.random.default_rng(seed)
        table = compare([session(rng), session(rng)], [session(rng), session(rng)])
        assert found(table) == {} and found(table, "planning_ms") == {}
        assert set(table["effect"]) == {effect_intervals.NO_EFFECT}


def test_a_planted_slowdown_is_found_on_exactly_its_queries_and_its_size_is_covered():
    rng = np.random.default_rng(11)
    planted = {"q03": 1.25, "q07": 1.25}
    table = compare([session(rng), session(rng)], [session(rng, planted), session(rng, planted)])
    assert found(table) == {"q03": effect_intervals.SLOWER, "q07": effect_intervals.SLOWER}
    assert found(table, "planning_ms") == {}  # only execution was slowed
    for query in planted:
        cell = table[(table["query_id"] == query) & (table["timing"] == "execution_ms")].iloc[0]
        assert cell["ci_low"] <= 1.25 <= cell["ci_high"]
        assert cell["pairs"] == cell["recurring"] == 2  # sessions paired in order, both agree


def test_a_certain_but_small_effect_is_not_flagged():
    """5% slower everywhere: the interval excludes 1, but not the 10% band around it."""
    rng = np.random.default_rng(5)
    small = {q: 1.05 for q in QUERIES}
    table = compare([session(rng, reps=40)], [session(rng, small, reps=40)])
    execution = table[table["timing"] == "execution_ms"]
    assert (execution["ci_low"] > 1).sum() >= 6  # most intervals do exclude no change
    assert found(table) == {}
    assert found(compare([session(rng, reps=40)], [session(rng, small, reps=40)], min_change=0.02)) != {}


def test_an_effect_in_one_session_pair_only_is_not_recurring():
    """Three of four B sessions 50% slower on q05, the fourth not: pooled, the interval is far
    beyond the band; but one pair disagrees, so it is not called an effect."""
    rng = np.random.default_rng(3)
    fluke = {"q05": 1.5}
    a = [session(rng) for _ in range(4)]
    b = [session(rng, fluke), session(rng, fluke), session(rng, fluke), session(rng)]
    cell = compare(a, b).query("query_id == 'q05' and timing == 'execution_ms'").iloc[0]
    assert cell["ci_low"] > 1.2
    assert (cell["effect"], cell["recurring"], cell["pairs"]) == (effect_intervals.NOT_RECURRING, 3, 4)


def test_too_few_values_get_no_interval_and_no_effect():
    rng = np.random.default_rng(9)
    table = compare([session(rng, reps=4)], [session(rng, {"q01": 3.0}, reps=4)])
    assert set(table["effect"]) == {effect_intervals.TOO_FEW}
    assert table["ci_low"].isna().all() and table["ratio"].notna().all()


def test_sessions_pair_in_order_or_every_way():
    assert effect_intervals.session_pairs(3, 3) == [(0, 0), (1, 1), (2, 2)]
    assert effect_intervals.session_pairs(1, 2) == [(0, 0), (0, 1)]


def interleaved(
    rng: np.random.Generator, planted: dict[str, float], rounds: int = 10
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One session of two variants, a and b, measured in the same rounds as the protocol runs
    them: every query still gets faster over the session (1.6 s down to 1 s), whichever variant
    goes first in a round pays 25% more, and the rounds alternate which one that is. b's rows
    are stored shuffled, so only the repetition can align them."""
    rows = []
    for query in QUERIES:
        for rep in range(rounds):
            drift = 1.6 - 0.6 * rep / (rounds - 1)
            for i, variant in enumerate(("a", "b")):
                first = i == rep % 2
                factor = planted.get(query, 1.0) if variant == "b" else 1.0
                execution = 1000 * drift * (1.25 if first else 1.0) * factor * rng.lognormal(0, 0.02)
                rows.append(
                    dict(
                        query_id=query,
                        variant=variant,
                        window="1d",
                        repetition=rep,
                        warmup=False,
                        status="ok",
                        planning_ms=50.0,
                        execution_ms=execution,
                        total_ms=50.0 + execution,
                        measured_utc=pd.Timestamp("2026-11-24")
                        + pd.Timedelta(seconds=10 * rep + (not first)),
                    )
                )
    frame = pd.DataFrame(rows)
    a = frame[frame["variant"] == "a"].assign(variant="a -> b")
    b = frame[frame["variant"] == "b"].sample(frac=1, random_state=1).assign(variant="a -> b")
    return a, b


def test_two_variants_of_one_session_are_paired_round_by_round():
    """Drift and the first-in-round penalty swamp a 25% slowdown between the medians of the two
    samples; the per-round ratios keep it: found on exactly the planted queries, size covered;
    the same session compared unpaired finds nothing, and A against A paired flags nothing."""
    rng = np.random.default_rng(7)
    planted = {"q03": 1.25, "q09": 1.25}
    sessions = [interleaved(rng, planted) for _ in range(2)]
    a, b = [s[0] for s in sessions], [s[1] for s in sessions]
    table = compare(a, b, paired=True)
    assert found(table) == {"q03": effect_intervals.SLOWER, "q09": effect_intervals.SLOWER}
    assert set(table["estimator"]) == {effect_intervals.PAIRED}
    for query in planted:
        cell = table[(table["query_id"] == query) & (table["timing"] == "execution_ms")].iloc[0]
        assert cell["ci_low"] <= 1.25 <= cell["ci_high"]
        # Round by round only the 2% noise is left; rounds paired wrongly keep the drift's 60%.
        assert cell["ci_high"] - cell["ci_low"] < 0.05
        assert cell["pairs"] == cell["recurring"] == 2
    assert found(compare(a, b)) == {}
    same = [interleaved(rng, {}) for _ in range(2)]
    assert found(compare([s[0] for s in same], [s[1] for s in same], paired=True)) == {}


def _workload(ratios: list[float], noise: float, n: int = 5, seed: int = 1) -> list:
    """One cell per query: Parquet's values around 100, the other side's around 100 * ratio."""
    rng = np.random.default_rng(seed)
    return [
        ([100 * (1 + noise * rng.standard_normal(n))], [100 * r * (1 + noise * rng.standard_normal(n))])
        for r in ratios
    ]


def test_resampling_the_queries_widens_the_interval_when_queries_differ_more_than_the_noise() -> None:
    cells = _workload([0.6, 0.8, 1.0, 1.2, 1.5, 0.7, 1.3, 0.9], noise=0.01)
    est, low, high = effect_intervals.geomean_interval(cells)
    q_est, q_low, q_high = effect_intervals.query_geomean_interval(cells)
    assert q_est == est  # one estimate, two intervals
    assert q_low < low <= est <= high < q_high
    assert q_low < 1 < q_high  # over queries like these, neither faster nor slower is shown


def test_queries_with_one_ratio_give_a_narrow_interval_around_it() -> None:
    cells = _workload([0.8] * 10, noise=0.01)
    est, low, high = effect_intervals.query_geomean_interval(cells)
    assert est == pytest.approx(0.8, rel=0.02)
    assert 0.78 < low <= est <= high < 0.82


def test_the_query_interval_is_seeded_and_needs_enough_queries() -> None:
    cells = _workload([0.6, 0.8, 1.0, 1.2, 1.5], noise=0.05)
    assert effect_intervals.query_geomean_interval(cells) == effect_intervals.query_geomean_interval(cells)
    est, low, high = effect_intervals.query_geomean_interval(cells[:4])
    assert not np.isnan(est) and np.isnan(low) and np.isnan(high)


def test_a_part_with_too_few_values_stays_at_its_median_while_the_queries_are_resampled() -> None:
    cells = [([np.array([100.0])], [np.array([100.0 * r])]) for r in (0.5, 1.0, 2.0, 1.5, 0.8)]
    est, low, high = effect_intervals.query_geomean_interval(cells)
    assert low < est < high  # single values: the spread is the queries' alone
    assert low >= 0.5 and high <= 2.0
