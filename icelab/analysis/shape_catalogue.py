"""The rows of a stored `doctor_catalogue` run (catalogue.json): per table shape, what the doctor
said, what it applied, and planning after the action as predicted (the simulated rewrite) and as
measured (the copy read again after `--apply`)."""

from __future__ import annotations

import json
from typing import Any

from icelab.core.runs import Run

CALIBRATION = "calibration.json"  # in the run directory: the calibration the doctor predicted with


def catalogue(run: Run) -> dict[str, Any]:
    """The run's catalogue.json."""
    return json.loads((run.path / "catalogue.json").read_text())


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def planning_after(shape: dict[str, Any]) -> str:
    """Per window, `7d 3 -> 1 manifests, 2.0 / 1.9 ms`: manifests read before -> after, and
    the model's planning after, from the simulated rewrite / from the table re-read once the
    action was applied (a prediction both: no plan is timed here); `-` when nothing was applied."""
    if not shape["applied"]:
        return "-"
    return "; ".join(
        f"{p['window']} {shape['before'][p['window']]} -> {shape['after'][p['window']]} manifests, "
        f"{_ms(p['predicted_ms'])} / {_ms(p['after_ms'])} ms"
        for p in shape["planning"]
    )


def rows(run: Run) -> list[dict[str, Any]]:
    """One row per shape, in the catalogue's order: shape, writer, verdict, exit code, action
    (with the statements left for review), planning after, and the doctor's seconds (check, apply)."""
    found = []
    for s in catalogue(run)["shapes"]:
        review = ", ".join(s["review"])
        found.append(
            {
                "shape": s["shape"],
                "writer": s["writer"],
                "about": s["about"],
                "verdict": s["verdict"],
                "exit_code": s["exit_code"],
                "action": s["action"] + (f" (review: {review})" if review else ""),
                "as_expected": {k: s[k] for k in s["expected"]} == s["expected"],
                "planning_after": planning_after(s),
                "check_s": s["check_s"],
                "apply_s": s["apply_s"],
                "worse": s["worse"],
            }
        )
    return found
