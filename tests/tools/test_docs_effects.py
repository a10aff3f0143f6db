"""The effect-check block counts what the stored comparison tables say: flags on A against A,
and, per planted query, flags and intervals covering the planted ratio."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from icelab.analysis.comparison import compare
from icelab.tools.docs.effects import checks, effect_checks
from tests.analysis.test_effect_intervals import session


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The comparison tables, computed once for the module (each is a bootstrap per cell)."""
    root = tmp_path_factory.mktemp("effects")
    rng = np.random.default_rng(7)
    where = root / "reference" / "effects"
    where.mkdir(parents=True)
    compare(session(rng), session(rng)).to_csv(where / "a_vs_a_1.csv", index=False)
    # A session that drifted: what an A against A table must show when it happens.
    compare(session(rng), session(rng, {"q03": 1.3})).to_csv(where / "a_vs_a_2.csv", index=False)
    faster = compare(session(rng), session(rng, {"q01": 0.7}))
    faster.to_csv(where / "setting_vectorization.csv", index=False)
    slower = compare(session(rng), session(rng, {"q04": 1.4}))
    slower.to_csv(where / "setting_medium_pruning.csv", index=False)
    for i in (1, 2):
        compare(session(rng), session(rng, {"q02": 1.25})).to_csv(where / f"planted_{i}.csv", index=False)
    (where / "README.md").write_text(
        "| file | run | planted |\n| --- | --- | --- |\n"
        "| `a_vs_a_1.csv` | 20261124T000000Z-aaaaaa | - |\n"
        "| `a_vs_a_2.csv` | 20261124T000003Z-dddddd | - | drifted |\n"
        "| `planted_1.csv` | 20261124T000001Z-bbbbbb | q02:0.25 |\n"
        "| `planted_2.csv` | 20261124T000002Z-cccccc | q02:0.25 |\n"
        "| `setting_vectorization.csv` | 20261124T000004Z-eeeeee | - | vectorization |\n"
        "| `setting_medium_pruning.csv` | 20261124T000005Z-ffffff | - | pruning | medium |\n"
    )
    return root


@pytest.fixture
def results(stored: Path, tmp_path: Path) -> Path:
    """A copy of the stored tables of this test's own, to edit freely."""
    shutil.copytree(stored / "reference", tmp_path / "reference")
    return tmp_path


def test_the_readme_names_each_table_its_run_and_its_plant(results: Path):
    found = checks(results)
    assert [(c.stem, c.run, c.plant) for c in found] == [
        ("a_vs_a_1", "20261124T000000Z-aaaaaa", {}),
        ("a_vs_a_2", "20261124T000003Z-dddddd", {}),
        ("planted_1", "20261124T000001Z-bbbbbb", {"q02": 0.25}),
        ("planted_2", "20261124T000002Z-cccccc", {"q02": 0.25}),
        ("setting_vectorization", "20261124T000004Z-eeeeee", {}),
        ("setting_medium_pruning", "20261124T000005Z-ffffff", {}),
    ]
    assert [c.dataset for c in found] == ["", "", "", "", "", "medium"]


def test_the_block_counts_flags_and_covering_intervals(results: Path):
    text = effect_checks(results)
    # A against A: nothing flagged.
    assert "| `a_vs_a_1.csv` | 0 | 0 | " in text
    # The drifted one: q03's execution and total flagged, by the effect and by the test.
    assert "| `a_vs_a_2.csv` | 2 | 2 | " in text
    assert text.count(" drifted |") == 1 and text.count(" - |\n") >= 1
    # The planted query's execution: slower in both sessions, its interval around 1.25 both times.
    assert "| q02 +25% | `execution_ms` | 2 of 2 | 2 of 2 |" in text
    # Nothing else flagged: 11 queries x 3 timings + the planted query's planning, per session.
    assert "Cells with nothing planted: 0 of 68 flagged." in text


def cells(text: str, setting: str) -> list[str]:
    """A real setting's row: its planning, execution and total cells."""
    row = next(line for line in text.splitlines() if line.startswith(f"| {setting} | "))
    return [cell.strip() for cell in row.split("|")[2:-1]]


def test_a_real_setting_is_its_own_row(results: Path):
    text = effect_checks(results)
    assert "| setting / `initial` | `planning_ms` | `execution_ms` | `total_ms` |" in text
    planning, execution, _ = cells(text, "vectorization")
    # q01 planted 30% faster in execution: one of the 12 cells flagged, the range reaching it.
    assert execution.endswith(", 1 of 12 faster") and "(0.6" in execution
    assert "faster" not in planning and "slower" not in planning
    assert "`setting_vectorization.csv`" not in text  # not an A against A session


def test_real_settings_are_grouped_by_the_dataset_the_readme_names(results: Path):
    text = effect_checks(results)
    undated, medium = text.split("Real settings")[1:]
    assert undated.startswith(" against `initial` in one session (run `20261124T000004Z-eeeeee`):")
    assert "| vectorization |" in undated and "| pruning |" not in undated
    assert medium.startswith(" at `medium` against `initial` in one session (run `20261124T000005Z-ffffff`):")
    # q04 planted 40% slower: flagged, and the spread of the ratios reaches it.
    execution = cells(medium, "pruning")[1]
    assert execution.endswith("(0.91 to 1.50), 1 of 12 slower")


def test_a_named_table_that_is_missing_is_an_error(results: Path):
    (results / "reference" / "effects" / "planted_2.csv").unlink()
    with pytest.raises(ValueError, match="planted_2.csv, which is not stored"):
        checks(results)
