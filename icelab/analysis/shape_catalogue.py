"""The rows of a stored `doctor_catalogue` run (catalogue.json): per table shape, what the doctor
said and what it applied; per window of each rewrite applied on a copy, planning measured before
and after (interleaved) beside the after the doctor predicted, and the verdict on the copy."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from icelab.core.runs import Run

CALIBRATION = "calibration.json"  # in the run directory: the calibration the doctor predicted with


def catalogue(run: Run) -> dict[str, Any]:
    """The run's catalogue.json."""
    return json.loads((run.path / "catalogue.json").read_text())


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def planning_after(shape: dict[str, Any]) -> str:
    """Per window, `7d 3 -> 1 manifests`: manifests read before -> after the action applied on a
    copy; `-` when nothing was applied."""
    if not shape["applied"]:
        return "-"
    return "; ".join(
        f"{p['window']} {shape['before'][p['window']]} -> {shape['after'][p['window']]} manifests"
        for p in shape["planning"]
    )


def _ratio_error(p: dict[str, Any]) -> float | None:
    """predicted ratio / measured ratio - 1 of one window (None without both)."""
    measured, predicted = p.get("ratio_measured"), p.get("ratio_predicted")
    if not measured or predicted is None:
        return None
    return predicted / measured - 1


def _error(predicted: float | None, measured: float | None) -> float | None:
    """predicted / measured - 1 (None without both)."""
    return predicted / measured - 1 if measured and predicted is not None else None


def judged(run: Run) -> list[dict[str, Any]]:
    """Per window of each shape whose advised rewrite was applied on a copy: manifests before ->
    after, planning measured before and after in the same interleaved rounds, the after the doctor
    predicted before applying, the two ratios after/now and the error of the predicted one, and the
    doctor's verdict on the rewritten copy."""
    found = []
    for s in catalogue(run)["shapes"]:
        if not s["applied"]:
            continue
        for p in s["planning"]:
            after, predicted = p.get("after_measured_ms"), p.get("after_predicted_ms")
            found.append(
                {
                    "shape": s["shape"],
                    "window": p["window"],
                    "before_manifests": p["before_manifests"],
                    "after_manifests": p["after_manifests"],
                    "before_measured_ms": p.get("before_measured_ms"),
                    "after_measured_ms": after,
                    "after_predicted_ms": predicted,
                    "after_error": _error(predicted, after),
                    "after_ratio_error": _error(p.get("after_ratio_ms"), after),
                    "after_split_error": _error(p.get("after_split_ms"), after),
                    "ratio_predicted": p.get("ratio_predicted"),
                    "ratio_measured": p.get("ratio_measured"),
                    "ratio_error": _ratio_error(p),
                    "plans": p.get("measured_plans"),
                    "after_verdict": s.get("after_verdict"),
                }
            )
    return found


def ratio_error(run: Run, quantile: float = 0.9) -> tuple[float, int]:
    """The `quantile` of |predicted ratio / measured ratio - 1| over the judged windows of `run`,
    and how many windows it is of.

    Raises:
        LookupError: when no window of the run has both ratios.
    """
    errors = sorted(abs(r["ratio_error"]) for r in judged(run) if r["ratio_error"] is not None)
    if not errors:
        raise LookupError(f"{run.path}: no window with a predicted and a measured ratio")
    return float(np.quantile(errors, quantile)), len(errors)


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
                "after_verdict": s.get("after_verdict"),
                "check_s": s["check_s"],
                "apply_s": s["apply_s"],
                "worse": s["worse"],
            }
        )
    return found
