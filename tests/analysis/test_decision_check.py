"""The doctor's decision check scored on a stored run (`icelab/analysis/decision_check.py`): each
part of the registered criterion holds or fails as the planning measured before and after says."""

from __future__ import annotations

import json
from pathlib import Path

from icelab.analysis.decision_check import score
from icelab.core.runs import Run


def window(name: str, before: float, after: float, predicted: float, spread: float = 1.0) -> dict:
    return {
        "window": name,
        "before_manifests": 10,
        "after_manifests": 1,
        "before_measured_ms": before,
        "after_measured_ms": after,
        "before_measured_range_ms": [before - spread, before + spread],
        "after_measured_range_ms": [after - spread, after + spread],
        "after_predicted_ms": before * predicted,
        "ratio_predicted": predicted,
        "ratio_measured": after / before,
        "measured_plans": 5,
        "worse": after > before * 1.1,
    }


def shape(name: str, verdict: str, planning: list[dict]) -> dict:
    found = {"shape": name, "writer": "spark-sql", "about": "", "verdict": verdict, "why": ""}
    return found | {"applied": True, "planning": planning}


def run(tmp_path: Path, shapes: list[dict]) -> Run:
    (tmp_path / "catalogue.json").write_text(json.dumps({"shapes": shapes}))
    return Run(tmp_path, "decision_check", "decision_check", "complete")


def test_a_run_that_meets_every_part_passes(tmp_path: Path):
    found = score(
        run(
            tmp_path,
            [
                shape("warmup_x", "rewrite needed", [window("1d", 50, 80, 0.1)]),  # not scored
                shape("a", "rewrite needed", [window("1d", 50, 20, 0.42), window("7d", 60, 30, 0.5)]),
                shape("b", "healthy", [window("1d", 40, 39, 1.0)]),
            ],
        )
    )
    assert found["passes"] and found["judged_windows"] == 3 and found["ratio_share"] == 1.0


def test_each_part_fails_on_its_own(tmp_path: Path):
    # The ratio: two of three windows predicted 40% off.
    found = score(
        run(
            tmp_path,
            [
                shape("a", "rewrite needed", [window("1d", 50, 20, 0.56), window("7d", 60, 30, 0.7)]),
                shape("b", "healthy", [window("1d", 40, 39, 1.0)]),
            ],
        )
    )
    assert found["parts"] == {"ratio": False, "advised": True, "healthy": True} and not found["passes"]
    # An advised rewrite whose plans overlap before and after (within the noise).
    found = score(run(tmp_path, [shape("a", "rewrite needed", [window("1d", 50, 45, 0.9, spread=10)])]))
    assert found["parts"]["advised"] is False and found["advised_failing"] == ["a"]
    # A healthy shape whose rewrite plans 20% faster.
    found = score(run(tmp_path, [shape("b", "healthy", [window("1d", 50, 40, 0.8)])]))
    assert found["parts"]["healthy"] is False and found["healthy_failing"] == ["b"]
