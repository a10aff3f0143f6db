"""The planning experiment's effect line, judged at the wide window, and its console note when a
rewritten layout plans no faster than the table as ingested there (a small table, where the
study's effect cannot show)."""

from __future__ import annotations

import pandas as pd

from icelab.experiments.planning import effect_line, size_note

TABLES = {
    "iceberg/as_ingested": {"manifests": 1, "manifest_bytes": 95_000},
    "iceberg/rewrite_8mb": {"manifests": 50, "manifest_bytes": 400_000},
}


def summary(as_ingested: float, rewritten: float, spread: float = 10.0) -> pd.DataFrame:
    """Medians at 180d as given, each round's quartiles `spread` ms either side; at 1d the
    rewrite plans slower, as on the small `effect` table (one rewritten manifest spans months),
    which must not decide the effect."""
    return with_spread(
        pd.DataFrame(
            {
                "variant": ["parquet", "iceberg/as_ingested", "iceberg/rewrite_8mb"] * 2,
                "format": ["parquet", "iceberg", "iceberg"] * 2,
                "window": ["1d"] * 3 + ["180d"] * 3,
                "planning_ms_median": [40.0, 260.0, 300.0, 900.0, as_ingested, rewritten],
            }
        ),
        spread,
    )


def with_spread(frame: pd.DataFrame, spread: float) -> pd.DataFrame:
    """Quartiles `spread` ms either side of each median."""
    median = frame["planning_ms_median"]
    return frame.assign(planning_ms_q1=median - spread, planning_ms_q3=median + spread)


def test_a_rewrite_no_faster_at_the_judged_window_is_explained():
    lines = size_note(summary(as_ingested=153, rewritten=185), TABLES, "180d")
    assert lines[0] == (
        "note: at 180d, iceberg/rewrite_8mb planned no faster than iceberg/as_ingested "
        "(185 vs 153 ms, medians)."
    )
    assert "this table's manifests hold 0.1 MB in all (1 manifest)" in lines[1]
    assert "docs/metadata-scale.md" in lines[2]


def test_a_rewrite_that_pays_needs_no_note():
    assert size_note(summary(as_ingested=500, rewritten=150), TABLES, "180d") == []
    assert size_note(summary(as_ingested=153, rewritten=185), {}, "180d") == []  # no table state


def test_the_effect_is_shown_when_the_rewrite_pays_at_the_wide_window_and_parquet_grows():
    line = effect_line(summary(as_ingested=500, rewritten=150), ("180d", "1d"))
    assert line == (
        "the study's effect: shown. At 180d: iceberg/as_ingested plans in 500 ms, iceberg/rewrite_8mb "
        "150 ms (at 1d: 260 and 300 ms); Parquet's planning grows 22.5x from 1d to 180d "
        "(medians over the queries)."
    )
    assert effect_line(summary(as_ingested=153, rewritten=185), ("180d", "1d")).startswith(
        "the study's effect: not shown."
    )
    flat = summary(as_ingested=500, rewritten=150).assign(planning_ms_median=[40.0, 260, 300, 40.0, 500, 150])
    assert effect_line(with_spread(flat, 10.0), ("180d", "1d")).startswith("the study's effect: not shown.")


def test_medians_that_lean_within_the_rounds_spread_do_not_show_the_effect():
    """As a smoke run on tiny in CI once had it: 69 ms as ingested, 53 ms rewritten to 8 MB."""
    close = summary(as_ingested=69, rewritten=53, spread=10.0)
    assert effect_line(close, ("180d", "1d")).startswith(
        "the study's effect: not shown beyond the rounds' spread. At 180d: iceberg/as_ingested plans in 69 ms"
    )
    assert effect_line(summary(as_ingested=69, rewritten=53, spread=7.0), ("180d", "1d")).startswith(
        "the study's effect: shown."
    )
    # Parquet's growth within its spread: 40 ms at 1d up to 50, 45 at 180d down to 35.
    pq_close = summary(as_ingested=500, rewritten=150).assign(
        planning_ms_median=[40.0, 260, 300, 45.0, 500, 150]
    )
    assert effect_line(with_spread(pq_close, 10.0), ("180d", "1d")).startswith(
        "the study's effect: not shown beyond the rounds' spread."
    )
