"""The doctor's decision check (docs/decision-check.md), scored on a stored `decision_check` run:
per window, the ratio after/now the doctor predicted before rewriting beside the ratio measured
on the table and its rewritten copy, planned in the same interleaved rounds; per shape, the
doctor's verdict beside what its rewrite measured; then the registered criterion.

The criterion, as registered (its three parts must all hold):
- ratio: the predicted ratio within RATIO_TOLERANCE of the measured one (|predicted / measured -
  1|) in at least RATIO_SHARE of the judged windows;
- advised: every shape advised a rewrite plans some window faster after it beyond the noise of
  the plans (the two medians' 95% intervals apart), and none worse (`diagnosis._worse`);
- healthy: no shape judged healthy whose rewrite plans some window more than HEALTHY_SLACK faster
  (medians).
A window is judged when it was measured by at least MIN_PLANS plans before and after.
"""

from __future__ import annotations

import json
from typing import Any

from icelab.core.runs import Run

RATIO_TOLERANCE = 0.25
RATIO_SHARE = 0.90
HEALTHY_SLACK = 0.10
MIN_PLANS = 5
# Shapes built and checked first to warm the driver's JVM, named before measuring: not scored.
WARMUP_PREFIX = "warmup_"


def _faster_beyond_noise(p: dict[str, Any]) -> bool:
    before = p.get("before_measured_range_ms")
    after = p.get("after_measured_range_ms")
    return bool(before and after and after[1] < before[0])


def windows(run: Run) -> list[dict[str, Any]]:
    """Per judged window of each scored shape whose copy was rewritten: the two ratios and the
    error of the predicted one, the medians before and after and whether the after is faster
    beyond the noise."""
    found = []
    for s in json.loads((run.path / "catalogue.json").read_text())["shapes"]:
        if s["shape"].startswith(WARMUP_PREFIX) or not s["applied"]:
            continue
        for p in s["planning"]:
            if (p.get("measured_plans") or 0) < MIN_PLANS or p.get("ratio_measured") is None:
                continue
            predicted, measured = p.get("ratio_predicted"), p["ratio_measured"]
            error = predicted / measured - 1 if predicted is not None and measured else None
            found.append(
                {
                    "shape": s["shape"],
                    "verdict": s["verdict"],
                    "window": p["window"],
                    "before_manifests": p["before_manifests"],
                    "after_manifests": p["after_manifests"],
                    "before_ms": p["before_measured_ms"],
                    "after_ms": p["after_measured_ms"],
                    "after_predicted_ms": p.get("after_predicted_ms"),
                    "ratio_predicted": predicted,
                    "ratio_measured": measured,
                    "ratio_error": error,
                    "within": error is not None and abs(error) <= RATIO_TOLERANCE,
                    "faster_beyond_noise": _faster_beyond_noise(p),
                    "worse": bool(p.get("worse")),
                    "plans": p["measured_plans"],
                }
            )
    return found


def shapes(run: Run) -> list[dict[str, Any]]:
    """Per scored shape: the doctor's verdict and why, and what its rewrite measured."""
    rows = windows(run)
    found = []
    for s in json.loads((run.path / "catalogue.json").read_text())["shapes"]:
        if s["shape"].startswith(WARMUP_PREFIX):
            continue
        mine = [r for r in rows if r["shape"] == s["shape"]]
        advised = s["verdict"] not in ("healthy", "broken")
        faster = max((1 - r["after_ms"] / r["before_ms"] for r in mine if r["before_ms"]), default=None)
        if advised:
            holds = any(r["faster_beyond_noise"] for r in mine) and not any(r["worse"] for r in mine)
        else:
            holds = faster is None or faster <= HEALTHY_SLACK
        found.append(
            {
                "shape": s["shape"],
                "writer": s["writer"],
                "about": s["about"],
                "verdict": s["verdict"],
                "why": s["why"],
                "windows": len(mine),
                "most_faster": faster,
                "holds": holds if mine or not advised else False,
            }
        )
    return found


def score(run: Run) -> dict[str, Any]:
    """The three parts of the criterion and the verdict, as plain values."""
    rows, per_shape = windows(run), shapes(run)
    judged = [r for r in rows if r["ratio_error"] is not None]
    share = sum(r["within"] for r in judged) / len(judged) if judged else None
    advised = [s for s in per_shape if s["verdict"] not in ("healthy", "broken")]
    healthy = [s for s in per_shape if s["verdict"] == "healthy"]
    parts = {
        "ratio": share is not None and share >= RATIO_SHARE,
        "advised": all(s["holds"] for s in advised),
        "healthy": all(s["holds"] for s in healthy),
    }
    return {
        "run": run.run_id,
        "windows": rows,
        "shapes": per_shape,
        "judged_windows": len(judged),
        "ratio_share": share,
        "advised_failing": [s["shape"] for s in advised if not s["holds"]],
        "healthy_failing": [s["shape"] for s in healthy if not s["holds"]],
        "parts": parts,
        "passes": bool(judged) and all(parts.values()),
    }
