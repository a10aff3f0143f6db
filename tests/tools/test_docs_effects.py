"""The effect-check block counts what the stored comparison tables say: flags on A against A,
and, per planted query, flags and intervals covering the planted ratio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icelab.tools.compare import compare
from icelab.tools.docs.effects import checks, effect_checks

QUERIES = ("q01_count", "q02_filter", "q03_nested")


def session(rng: np.random.Generator, slow: dict[str, float] | None = None) -> pd.DataFrame:
    """Ten measured rounds per query; execution of `slow`'s queries that fraction slower."""
    rows = []
    for query in QUERIES:
        for rep in range(10):
            planning = 100 * rng.uniform(0.98, 1.02)
            execution = 1000 * rng.uniform(0.97, 1.03) * (1 + (slow or {}).get(query, 0.0))
            rows.append(
                dict(
                    query_id=query,
                    variant="v",
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


@pytest.fixture
def results(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    where = tmp_path / "reference" / "effects"
    where.mkdir(parents=True)
    compare(session(rng), session(rng)).to_csv(where / "a_vs_a_1.csv", index=False)
    # A session that drifted: what an A against A table must show when it happens.
    compare(session(rng), session(rng, {"q03_nested": 0.3})).to_csv(where / "a_vs_a_2.csv", index=False)
    for i in (1, 2):
        compare(session(rng), session(rng, {"q02_filter": 0.25})).to_csv(
            where / f"planted_{i}.csv", index=False
        )
    (where / "README.md").write_text(
        "| file | run | planted |\n| --- | --- | --- |\n"
        "| `a_vs_a_1.csv` | 20261124T000000Z-aaaaaa | - |\n"
        "| `a_vs_a_2.csv` | 20261124T000003Z-dddddd | - | drifted |\n"
        "| `planted_1.csv` | 20261124T000001Z-bbbbbb | q02:0.25 |\n"
        "| `planted_2.csv` | 20261124T000002Z-cccccc | q02:0.25 |\n"
    )
    return tmp_path


def test_the_readme_names_each_table_its_run_and_its_plant(results: Path):
    found = checks(results)
    assert [(c.stem, c.run, c.plant) for c in found] == [
        ("a_vs_a_1", "20261124T000000Z-aaaaaa", {}),
        ("a_vs_a_2", "20261124T000003Z-dddddd", {}),
        ("planted_1", "20261124T000001Z-bbbbbb", {"q02": 0.25}),
        ("planted_2", "20261124T000002Z-cccccc", {"q02": 0.25}),
    ]


def test_the_block_counts_flags_and_covering_intervals(results: Path):
    text = effect_checks(results)
    # A against A: 3 queries x 3 timings, nothing flagged.
    assert "| `a_vs_a_1.csv` | `20261124T000000Z-aaaaaa` | 3 | 9 | 10 to 10 | 0 | 0 | 0 |" in text
    # The drifted one: q03's execution and total flagged, by the effect and by the test.
    assert "| `a_vs_a_2.csv` | `20261124T000003Z-dddddd` | 3 | 9 | 10 to 10 | 2 | 0 | 2 |" in text
    assert text.count(" drifted |") == 1 and text.count(" - |\n") >= 1
    # The planted query's execution: slower in both sessions, its interval around 1.25 both times.
    assert "| q02 +25% | `execution_ms` | 2 of 2 | 2 of 2 |" in text
    # Nothing else flagged: 2 queries x 3 timings + the planted query's planning, per session.
    assert "0 of 14 flagged over the 2 sessions." in text


def test_a_named_table_that_is_missing_is_an_error(results: Path):
    (results / "reference" / "effects" / "planted_2.csv").unlink()
    with pytest.raises(ValueError, match="planted_2.csv, which is not stored"):
        checks(results)
