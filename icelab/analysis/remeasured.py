"""The doctor's measured saving beside the independent re-measure of the same rewrite in a fresh
process (`icelab.health.remeasure`), on a stored doctor_catalogue-task run; and the criterion of
the decision check's registration 7 (docs/decision-check-7.md), as registered:

- verdict: every scored shape's verdict is right by the re-measure. A shape advised a rewrite plans
  some window faster after it beyond the noise (the two medians' 95% intervals apart), and no
  window worse (slower beyond both intervals, by WORSE_SHARE of its plan now or more). A shape
  judged healthy plans no window HEALTHY_SLACK or more faster after the rewrite (medians).
- saving: in at least SAVING_SHARE of the judged windows, the saving the doctor reported (its plan
  now minus its plan after, measured on its scratch copy, ms) is within SAVING_TOLERANCE of the
  re-measured one (|doctor - re-measure| <= SAVING_TOLERANCE x |re-measure|), or both savings are
  under NO_SAVING of the re-measured plan now (neither sees a saving worth a rewrite).
A window is judged when the doctor measured it on a copy and both sides have MIN_PLANS plans or
more. A table with no time window to plan is not scored. The check passes when both parts hold.
"""

from __future__ import annotations

import json
from typing import Any

from icelab.core.runs import Run

SAVING_TOLERANCE = 0.25
SAVING_SHARE = 0.90
NO_SAVING = 0.10
HEALTHY_SLACK = 0.10
WORSE_SHARE = 0.10
MIN_PLANS = 5
REMEASURED = "remeasure.json"
# Shapes built and checked first to warm the driver's JVM, named before measuring: not scored.
WARMUP_PREFIX = "warmup_"
NOT_SCORED = ("broken",)


def _doctor(planning: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The doctor's measured before and after per window, where it measured both."""
    return {
        p["window"]: p
        for p in planning
        if p.get("before_measured_ms") is not None and p.get("after_measured_ms") is not None
    }


def _window(shape: dict[str, Any], again: dict[str, Any], doctor: dict[str, Any] | None) -> dict[str, Any]:
    now, after = again["now"], again["after"]
    n_ms, a_ms = now["measured_ms"], after["measured_ms"]
    saving = n_ms - a_ms
    (n_low, n_high), (a_low, a_high) = now["measured_range_ms"], after["measured_range_ms"]
    row: dict[str, Any] = {
        "shape": shape["shape"],
        "verdict": shape["verdict"],
        "window": again["window"],
        "now_ms": n_ms,
        "after_ms": a_ms,
        "now_range_ms": now["measured_range_ms"],
        "after_range_ms": after["measured_range_ms"],
        "manifests": [now["manifests_scanned"], after["manifests_scanned"]],
        "saving_ms": saving,
        "faster_beyond_noise": a_high < n_low,
        "worse": a_low > n_high and -saving >= WORSE_SHARE * n_ms,
        "plans": min(now["measured_plans"], after["measured_plans"]),
        "doctor_saving_ms": None,
        "saving_error": None,
        "within": None,
    }
    if doctor is None or min(row["plans"], doctor.get("measured_plans") or 0) < MIN_PLANS:
        return row
    mine = doctor["before_measured_ms"] - doctor["after_measured_ms"]
    none_worth = abs(mine) < NO_SAVING * n_ms and abs(saving) < NO_SAVING * n_ms
    return row | {
        "doctor_before_ms": doctor["before_measured_ms"],
        "doctor_after_ms": doctor["after_measured_ms"],
        "doctor_saving_ms": mine,
        "saving_error": mine / saving - 1 if saving else None,
        "within": none_worth or abs(mine - saving) <= SAVING_TOLERANCE * abs(saving),
    }


def joined(run: Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per scored shape (its verdict, whether the re-measure says it is right, its error if the
    re-measure failed) and per window of those shapes, the doctor's saving beside the re-measure's.

    Raises:
        LookupError: the run holds no re-measure.
    """
    path = run.path / REMEASURED
    if not path.is_file():
        raise LookupError(f"run {run.run_id} has no {REMEASURED}: it ran without experiment.remeasure")
    again = {r["shape"]: r for r in json.loads(path.read_text())["rows"]}
    shapes, windows = [], []
    for s in json.loads((run.path / "catalogue.json").read_text())["shapes"]:
        if s["shape"].startswith(WARMUP_PREFIX) or s["verdict"] in NOT_SCORED:
            continue
        if not (s.get("remeasure_job") or {}).get("windows", True):
            continue  # no time window to plan (no time field in its spec): nothing to measure
        found = again.get(s["shape"], {"error": "not re-measured"})
        doctor = _doctor(s.get("planning") or [])
        mine = [_window(s, w, doctor.get(w["window"])) for w in found.get("windows", [])]
        windows += mine
        advised = s["verdict"] != "healthy"
        if found.get("error") or not mine:
            right = False
        elif advised:
            right = any(w["faster_beyond_noise"] for w in mine) and not any(w["worse"] for w in mine)
        else:
            right = all(w["after_ms"] > (1 - HEALTHY_SLACK) * w["now_ms"] for w in mine)
        faster = max((1 - w["after_ms"] / w["now_ms"] for w in mine if w["now_ms"]), default=None)
        shapes.append(
            {
                "shape": s["shape"],
                "writer": s["writer"],
                "verdict": s["verdict"],
                "basis": s.get("basis"),
                "why": s.get("why", ""),
                "most_faster": faster,
                "right": right,
                "error": found.get("error"),
            }
        )
    return shapes, windows


def score(run: Run) -> dict[str, Any]:
    """The two parts of registration 7's criterion and the verdict, as plain values."""
    shapes, windows = joined(run)
    judged = [w for w in windows if w["within"] is not None]
    share = sum(w["within"] for w in judged) / len(judged) if judged else None
    parts = {
        "verdict": bool(shapes) and all(s["right"] for s in shapes),
        "saving": share is not None and share >= SAVING_SHARE,
    }
    misses = [abs(w["saving_ms"]) for w in judged if not w["within"]]
    hits = [abs(w["saving_ms"]) for w in judged if w["within"]]
    return {
        "run": run.run_id,
        "shapes": shapes,
        "windows": windows,
        "judged_windows": len(judged),
        "saving_share": share,
        # How big a saving the misses had, re-measured, against the windows that agreed.
        "missed_largest_ms": max(misses, default=None),
        "within_smallest_ms": min(hits, default=None),
        "wrong": [s["shape"] for s in shapes if not s["right"]],
        "parts": parts,
        "passes": all(parts.values()),
    }
