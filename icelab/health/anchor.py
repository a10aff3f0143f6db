"""Planning after a rewrite, anchored on the table's own measured plans.

A calibration's absolute milliseconds belong to the sitting and machine it was made in (two made
31 minutes apart on one machine shifted the model's bias by 13 points), while what it learned of
the cost per manifest, per entry and per byte carries over as a proportion. So where a window was
measured, its "after" comes from the plan measured now, in one of two forms (FORM):

- `ratio`: the measured plan times the model's ratio after/now;
- `split`: the plan's fixed part, measured on the same table as the plan of a window holding no
  data (it reads the manifest list and no manifest), plus the rest of the measured plan times the
  model's ratio after/now of its own variable parts (each prediction less its fit's constant).
  Where fixed costs dominate (a window of a few manifests), a plain ratio cannot tell that most of
  the plan stays.

Only where nothing was measured does the doctor fall back on the calibration's absolute figure,
and it says so.

The change's uncertainty has two parts: the noise of the plans measured now (half the width of the
distribution-free interval of their median, `measured.median_range`, and of the fixed plan's) and
the form's own error, RATIO_ERROR of the after figure, measured on the doctor catalogue's
before/after pairs (docs/doctor.md, "Advice judged by applying it"). A rewrite is worth it when the
saving passes both (and `gain.MIN_GAIN_SHARE` of the window's planning); it is undecided while only
the noise of the plans stands in the way, which more plans can shrink.
"""

from __future__ import annotations

from typing import Any

# The form of the anchor, and its error: at least the 90th percentile of |predicted ratio / measured
# ratio - 1| over the windows of the doctor catalogue's reference run (results/reference/
# doctor_catalogue, measured before and after on copies, interleaved; docs/doctor.md, "Advice judged
# by applying it"); tests/health/test_anchor.py holds it to that run. The same run chose `split`: its
# "after" came within 25% of the copy's plan in more windows than the plain ratio's did.
FORM = "split"
RATIO_ERROR = 0.30
MEASURED = "measured x model ratio"
CALIBRATION = "calibration (not measured)"
# Plans a window needs before its noise can be told (a distribution-free interval of the median
# needs three): with fewer, the calibration's figures stand in (a cold plan on a huge table).
MIN_PLANS = 3
# The window planned for the fixed part: this far past the newest data, one day long.
FIXED_WINDOW = "none"
FIXED_AFTER_US = 400 * 86_400_000_000


def model_ratios(now: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, float] | None:
    """The model's after/now for one window, whole (`ratio`) and of the variable parts alone
    (`variable_ratio`, each prediction less its fit's `fixed_ms`); None without both predictions."""
    if not now or not after or now.get("ms") is None or after.get("ms") is None or now["ms"] <= 0:
        return None
    found = {"ratio": after["ms"] / now["ms"]}
    variable_now = now["ms"] - now.get("fixed_ms", 0.0)
    variable_after = after["ms"] - after.get("fixed_ms", 0.0)
    if variable_now > 0 and variable_after >= 0:
        found["variable_ratio"] = variable_after / variable_now
    return found


def fixed_window(windows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A window past the newest data, holding none: its plan is the table's fixed part."""
    ends = [w["end_us"] for w in windows if "end_us" in w]
    if not ends:
        return None
    start = max(ends) + FIXED_AFTER_US
    return {"window": FIXED_WINDOW, "start_us": start, "end_us": start + 86_400_000_000}


def _half(w: dict[str, Any]) -> float:
    low, high = w.get("measured_range_ms") or (w["measured_ms"], w["measured_ms"])
    return (high - low) / 2


def anchored(
    window: dict[str, Any], ratios: dict[str, float] | None, fixed: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """A window's planning after, from its plans measured now (`window`), the model's `ratios`
    (`model_ratios`) and the table's fixed plan (`fixed`, a measured `fixed_window`): now_ms (the
    measured median), after_ms in the form FORM (after_ratio_ms and after_split_ms both), its
    range, gain_ms (now - after), error_ms (the form's error on the after figure plus the plans'
    noise) and noise_ms, and ratio (after / now); None when the window was not measured or there
    is no ratio, or fewer than MIN_PLANS plans."""
    measured = window.get("measured_ms")
    if measured is None or not ratios or window.get("measured_plans", 0) < MIN_PLANS:
        return None
    noise = _half(window)
    by_ratio = measured * ratios["ratio"]
    base = (fixed or {}).get("measured_ms") if (fixed or {}).get("measured_plans", 0) >= MIN_PLANS else None
    by_split = None
    if base is not None and "variable_ratio" in ratios:
        base = min(base, measured)
        by_split = base + (measured - base) * ratios["variable_ratio"]
    after = by_split if FORM == "split" and by_split is not None else by_ratio
    if after is by_split:
        noise += _half(fixed) * abs(1 - ratios["variable_ratio"])
    share = after / measured if measured else 1.0
    low, high = window.get("measured_range_ms") or (measured, measured)
    return {
        "basis": MEASURED,
        "now_ms": measured,
        "after_ms": round(after, 1),
        "after_ratio_ms": round(by_ratio, 1),
        "after_split_ms": round(by_split, 1) if by_split is not None else None,
        "fixed_measured_ms": base,
        "after_range_ms": [
            round(low * share * (1 - RATIO_ERROR), 1),
            round(high * share * (1 + RATIO_ERROR), 1),
        ],
        "gain_ms": round(measured - after, 1),
        "error_ms": round(after * RATIO_ERROR + noise, 1),
        "noise_ms": round(noise, 1),
        "ratio": round(share, 4),
    }


def undecided(row: dict[str, Any], min_share: float) -> bool:
    """Whether more plans could change the verdict on this window: the change is large enough to
    count (at least `min_share` of its planning) and passes the form's error, but not yet the
    noise of the plans measured."""
    if row.get("basis") != MEASURED or not row.get("now_ms"):
        return False
    change = abs(row["gain_ms"])
    form_part = row["error_ms"] - row["noise_ms"]
    return change >= min_share * row["now_ms"] and form_part < change <= row["error_ms"]
