"""The rows of a stored doctor_catalogue run: planning after the action as predicted and measured,
and a shape the doctor judged otherwise than expected marked so."""

from __future__ import annotations

import json
from pathlib import Path

from icelab.analysis.shape_catalogue import planning_after, rows
from icelab.core.runs import Run


def shape(name: str, applied: bool, verdict: str = "healthy") -> dict:
    planning = [{"window": "1d", "predicted_ms": 2.04, "after_ms": 1.96}] if applied else []
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
    assert a["planning_after"] == "1d 6 -> 1 manifests, 2.0 / 2.0 ms" and a["as_expected"]
    assert b["planning_after"] == "-" and not b["as_expected"]
    assert b["action"] == "none (review: remove_orphans)"
    assert planning_after(shape("c", False)) == "-"
