"""The budget block splits a run into its phases by the rows' warm-up and repetition numbers, and
counts the executed rounds a budget holds at the run's median round."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from icelab.tools.docs.budget import BUDGET_MINUTES, fits, measured, phases
from icelab.tools.docs.sources import phase_minutes

PROTOCOL = {"warmups": 1, "steady_k": 3}


def rows(start: str, minutes: list[float], repetition: int, warmup: bool, executed: bool) -> list[dict]:
    at = pd.Timestamp(start)
    return [
        {
            "query_id": f"q{i:02d}",
            "window": "1d",
            "variant": "parquet",
            "repetition": repetition,
            "warmup": warmup,
            "executed": executed,
            "measured_utc": (at + pd.Timedelta(minutes=m)).isoformat(),
        }
        for i, m in enumerate(minutes)
    ]


def run() -> pd.DataFrame:
    """Steady state (repetitions -2 and -3: below the one warm-up round, -1), the warm-up round,
    two executed measured rounds and one planning-only round."""
    return pd.DataFrame(
        rows("2026-01-01T00:00", [0, 4], -3, True, True)
        + rows("2026-01-01T00:05", [0, 3], -2, True, True)
        + rows("2026-01-01T00:10", [0, 1], -1, True, False)
        + rows("2026-01-01T00:12", [0, 5], 0, False, True)
        + rows("2026-01-01T00:20", [0, 7], 1, False, True)
        + rows("2026-01-01T00:30", [0, 0.5], 2, False, False)
    )


def test_each_phase_is_timed_from_its_own_rows():
    p = phases(run(), PROTOCOL)
    assert p["steady"] == 8  # 00:00 to 00:08, both steady repetitions; not the warm-up round's
    assert p["executed"] == [5, 7]
    assert p["planned"] == [0.5]


def test_an_empty_phase_is_zero_minutes():
    assert phase_minutes(pd.DataFrame({"measured_utc": []})) == 0


def test_the_budget_holds_the_rounds_the_minutes_left_cover():
    assert fits(total=50, executed=[6, 6, 7], executions=5, budget=60) == 6  # 10 min left: one more
    assert fits(total=50, executed=[6, 6, 7], executions=5, budget=50) == 5
    assert fits(total=70, executed=[6, 6, 7], executions=5, budget=60) == 3  # 10 over: two fewer
    assert fits(total=10, executed=[], executions=0, budget=20) is None


def test_each_default_is_what_its_budget_holds_in_the_reference_run():
    # conf/experiment/*.yaml's protocol.executions must follow the stored run, not a guess.
    results = Path(__file__).parents[2] / "results"
    for experiment in BUDGET_MINUTES:
        b = measured(results, experiment)
        assert b["holds"] == b["default"], experiment
