"""Registration 7 scored on a stored run (`icelab/analysis/remeasured.py`): the doctor's measured
saving beside the fresh-process re-measure, and each part of the criterion holding or failing as
the plans say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icelab.analysis.remeasured import joined, score
from icelab.core.runs import Run


def cell(ms: float, spread: float = 1.0, plans: int = 10) -> dict:
    return {"measured_ms": ms, "measured_range_ms": [ms - spread, ms + spread], "measured_plans": plans}


def doctor(name: str, before: float, after: float) -> dict:
    return {"window": name, "before_measured_ms": before, "after_measured_ms": after, "measured_plans": 10}


def again(name: str, now: float, after: float, spread: float = 1.0) -> dict:
    return {
        "window": name,
        "now": cell(now, spread) | {"manifests_scanned": 10},
        "after": cell(after, spread) | {"manifests_scanned": 1},
    }


def stored(tmp_path: Path, shapes: list[tuple[str, str, list[dict], list[dict]]]) -> Run:
    """A run of (shape, verdict, the doctor's planning rows, the re-measure's windows)."""
    rows = [
        {"shape": s, "writer": "spark-sql", "verdict": v, "why": "", "planning": p} for s, v, p, _ in shapes
    ]
    (tmp_path / "catalogue.json").write_text(json.dumps({"shapes": rows}))
    remeasured = [{"shape": s, "windows": w} for s, _, _, w in shapes]
    (tmp_path / "remeasure.json").write_text(json.dumps({"rows": remeasured}))
    return Run(tmp_path, "decision_check_7", "decision_check_7", "complete")


GOOD = [
    ("warmup_x", "healthy", [], [again("1d", 50, 10)]),  # not scored
    (
        "a",
        "rewrite needed",
        [doctor("1d", 60, 20), doctor("7d", 80, 20)],
        [again("1d", 55, 15), again("7d", 75, 20)],
    ),
    # A healthy table whose rewrite saves nothing: both savings under 10% of the plan now.
    ("b", "healthy", [doctor("1d", 40, 39)], [again("1d", 40, 41)]),
    # One manifest: the doctor measured no copy; only its verdict is judged.
    ("c", "healthy", [], [again("1d", 20, 20)]),
]


def test_a_run_that_meets_both_parts_passes(tmp_path: Path):
    found = score(stored(tmp_path, GOOD))
    assert found["passes"], found
    assert [s["shape"] for s in found["shapes"]] == ["a", "b", "c"]
    assert found["judged_windows"] == 3 and found["saving_share"] == 1.0


@pytest.mark.parametrize(
    ("change", "part"),
    [
        # The doctor reported 40 ms saved where the re-measure found 25 (60% off).
        (("a", "rewrite needed", [doctor("1d", 60, 20)], [again("1d", 45, 20)]), "saving"),
        # An advised rewrite the re-measure finds no faster beyond the noise.
        (("a", "rewrite needed", [doctor("1d", 60, 59)], [again("1d", 60, 59, spread=5)]), "verdict"),
        # A healthy table whose rewrite the re-measure finds 30% faster.
        (("b", "healthy", [doctor("1d", 40, 29)], [again("1d", 40, 28)]), "verdict"),
        # A table the re-measure could not measure is a wrong verdict.
        (("c", "healthy", [], []), "verdict"),
    ],
)
def test_each_part_fails_on_its_own(tmp_path: Path, change, part):
    shapes = [change if s[0] == change[0] else s for s in GOOD]
    found = score(stored(tmp_path, shapes))
    assert not found["passes"] and not found["parts"][part], found
    assert all(ok for name, ok in found["parts"].items() if name != part), found["parts"]


def test_a_run_without_a_remeasure_is_a_lookup_error(tmp_path: Path):
    (tmp_path / "catalogue.json").write_text(json.dumps({"shapes": []}))
    with pytest.raises(LookupError, match="remeasure.json"):
        joined(Run(tmp_path, "decision_check_7", "decision_check_7", "complete"))
