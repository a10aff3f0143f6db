"""The run comparison flags exactly the significant, large changes; says when it cannot."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icelab.analysis.comparison import (
    IMPROVEMENT,
    MISSING,
    NO_CHANGE,
    REGRESSION,
    TOO_FEW,
    compare,
    min_p,
    reps_needed,
)

BASE = [100.0, 103.0, 97.0, 101.0, 99.0, 102.0]


def frame(scale: dict[str, float] | None = None, reps: int = 6, warm: float = 1e6) -> pd.DataFrame:
    """Queries q1..q4, one variant and window; planning = BASE x the query's scale, execution
    = 10x planning; one warm-up round far off, which must never count."""
    scale = scale or {}
    rows = []
    for query in ("q1", "q2", "q3", "q4"):
        for rep in range(-1, reps):
            planning = warm if rep < 0 else BASE[rep] * scale.get(query, 1.0)
            rows.append(
                dict(
                    query_id=query,
                    variant="iceberg/optimized",
                    window="1d",
                    repetition=rep,
                    warmup=rep < 0,
                    status="ok",
                    planning_ms=planning,
                    execution_ms=10 * planning,
                    total_ms=11 * planning,
                )
            )
    return pd.DataFrame(rows)


def flagged(table: pd.DataFrame) -> set[tuple[str, str, str]]:
    hits = table[table["verdict"].isin([REGRESSION, IMPROVEMENT])]
    return {(r.query_id, r.timing, r.verdict) for r in hits.itertuples()}


def test_a_run_against_itself_flags_nothing():
    table = compare(frame(), frame())
    assert set(table["verdict"]) == {NO_CHANGE}
    assert (table["change"] == 0).all() and (table["p_value"] == 1).all()


def test_a_shifted_distribution_flags_exactly_the_shifted_queries():
    table = compare(frame(), frame({"q2": 1.5, "q3": 0.6}))
    assert flagged(table) == {
        (q, t, v)
        for q, v in (("q2", REGRESSION), ("q3", IMPROVEMENT))
        for t in ("planning_ms", "execution_ms", "total_ms")
    }
    q2 = table[(table["query_id"] == "q2") & (table["timing"] == "planning_ms")].iloc[0]
    assert q2["change"] == pytest.approx(0.5)
    assert q2["p_value"] < 0.05 and q2["n_a"] == q2["n_b"] == 6  # the warm-up is not counted


def test_a_significant_but_small_change_is_not_flagged():
    table = compare(frame(), frame({"q1": 1.05}))  # every value 5% higher: significant, below 10%
    q1 = table[table["query_id"] == "q1"]
    assert (q1["p_value"] < 0.05).all()
    assert set(q1["verdict"]) == {NO_CHANGE}
    assert flagged(compare(frame(), frame({"q1": 1.05}), min_change=0.04)) != set()


def test_too_few_repetitions_is_said_not_hidden():
    assert min_p(3, 3) == pytest.approx(0.1)
    assert min_p(4, 4) == pytest.approx(2 / 70)
    assert reps_needed(0.05) == 4
    table = compare(frame(reps=3), frame({"q2": 3.0}, reps=3))
    assert set(table["verdict"]) == {TOO_FEW}  # even a 3x change: p cannot go below 0.1
    four = compare(frame(reps=4), frame({"q2": 3.0}, reps=4), correction="none")
    assert set(four["verdict"]) == {NO_CHANGE, REGRESSION}
    # 4 vs 4 gives p >= 0.029 at best: over 12 cells the false-discovery correction wants more.
    assert set(compare(frame(reps=4), frame({"q2": 3.0}, reps=4))["verdict"]) == {NO_CHANGE}


def test_the_correction_keeps_chance_from_flagging_unchanged_cells():
    """200 cells, both runs drawn from one distribution: uncorrected, about 5% are 'significant'."""
    rng = np.random.default_rng(7)

    def noise() -> pd.DataFrame:
        values = rng.lognormal(mean=5, sigma=0.3, size=(200, 10))
        return pd.DataFrame(
            dict(
                query_id=f"q{i}",
                variant="v",
                window="1d",
                repetition=r,
                warmup=False,
                status="ok",
                planning_ms=values[i, r],
                execution_ms=None,
                total_ms=None,
            )
            for i in range(200)
            for r in range(10)
        )

    a, b = noise(), noise()
    assert len(flagged(compare(a, b, min_change=0.0, correction="none"))) >= 3
    assert flagged(compare(a, b, min_change=0.0)) == set()


def test_a_case_only_one_run_has_is_missing():
    b = frame()
    table = compare(frame(), b[b["query_id"] != "q4"])
    assert set(table[table["query_id"] == "q4"]["verdict"]) == {MISSING}
