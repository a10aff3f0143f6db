"""The rows of a stored doctor_catalogue run: planning after the action as predicted and measured,
and a shape the doctor judged otherwise than expected marked so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icelab.analysis.shape_catalogue import judged, planning_after, ratio_error, rows
from icelab.core.runs import Run


def shape(name: str, applied: bool, verdict: str = "healthy") -> dict:
    planning = (
        [
            {
                "window": "1d",
                "before_manifests": 6,
                "after_manifests": 1,
                "before_measured_ms": 40.0,
                "after_measured_ms": 30.0,
                "after_predicted_ms": 24.0,
                "ratio_predicted": 0.6,
                "ratio_measured": 0.75,
                "measured_plans": 5,
            }
        ]
        if applied
        else []
    )
    return {
        "shape": name,
        "writer": "spark-sql",
        "about": "",
        "expected": {"verdict": "healthy", "exit_code": 0, "action": "none"},
        "verdict": verdict,
        "exit_code": 0,
        "action": "none",
        "review": ["remove_orphans"] if not applied else [],
        "before": {"1d": 6},
        "after": {"1d": 1} if applied else {},
        "planning": planning,
        "applied": applied,
        "check_s": 1.23,
        "apply_s": 2.5 if applied else None,
        "worse": False,
    }


def test_rows_give_planning_after_and_mark_an_unexpected_verdict(tmp_path: Path):
    (tmp_path / "catalogue.json").write_text(
        json.dumps({"tiny": False, "shapes": [shape("a", True), shape("b", False, "rewrite needed")]})
    )
    a, b = rows(Run(tmp_path, "doctor_catalogue", "doctor_catalogue", "complete"))
    assert a["planning_after"] == "1d 6 -> 1 manifests" and a["as_expected"]
    assert b["planning_after"] == "-" and not b["as_expected"]
    assert b["action"] == "none (review: remove_orphans)"
    assert planning_after(shape("c", False)) == "-"


def test_judged_windows_give_the_ratios_and_their_error(tmp_path: Path):
    (tmp_path / "catalogue.json").write_text(
        json.dumps({"tiny": False, "shapes": [shape("a", True), shape("b", False)]})
    )
    run = Run(tmp_path, "doctor_catalogue", "doctor_catalogue", "complete")
    (row,) = judged(run)
    assert row["shape"] == "a" and row["ratio_error"] == pytest.approx(0.6 / 0.75 - 1)
    assert row["after_error"] == pytest.approx(24 / 30 - 1)
    assert ratio_error(run) == (pytest.approx(0.2), 1)
