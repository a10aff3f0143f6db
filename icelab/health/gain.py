"""Whether a manifest rewrite is worth running: what the simulated rewrite (`rewrite.simulate`)
would change in what each window plans, and the verdict that follows.

A rewrite is advised only when the rules of the policy trip (as manifest_health's) and the
simulated layout improves the plan of some window by more than its uncertainty and by at least
MIN_GAIN_SHARE of the window's planning, and makes no window plan more manifests, or slower by as
much. Where the window was measured, the saving is the measured plan times one minus the model's
ratio after/now, and its uncertainty the plans' noise and the ratio's error (`anchor`); where
nothing was measured, the calibration's predicted saving and its error. A table whose simulated
rewrite plans as many manifests in every window is at its layout: healthy (the fixed point).
Without a fitted model, the manifests each window plans
decide: at least half fewer for some window, and more for none. A table no rewrite can improve
is healthy before any of that: unpartitioned (every query plans every manifest whatever their
layout), one data manifest, or already aligned (no partition planned from more than one manifest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icelab.core.units import plural
from icelab.health.anchor import CALIBRATION, MEASURED, MIN_PLANS, anchored, model_ratios, undecided
from icelab.health.check import Health, bounds_counts, window_kept
from icelab.health.forecast import PlanningModel, window_reads
from icelab.health.policy import LEVELS
from icelab.health.reader import DATA, Metadata
from icelab.health.rewrite import Simulated

# A rewrite must save at least this share of a window's predicted planning to be worth its commit.
MIN_GAIN_SHARE = 0.10
HEALTHY = "healthy"
# What a verdict rests on.
ON_COPY = "measured on a scratch copy"
PREDICTED = "predicted"


@dataclass
class Weighed:
    """The verdict on a rewrite, why in one line, and each window now and after it."""

    verdict: str
    why: str
    windows: list[dict[str, Any]] = field(default_factory=list)
    bounds_after: dict[str, float] = field(default_factory=dict)
    basis: str = PREDICTED  # ON_COPY where the verdict rests on the rewrite measured on a copy

    @property
    def advised(self) -> bool:
        return self.verdict != HEALTHY


def already_fine(h: Health, meta: Metadata) -> str | None:
    """Why no rewrite can improve this table (None when one might)."""
    spec = meta.specs.get(meta.default_spec_id)
    data = h.data_manifests
    if spec is None or not spec.fields:
        return (
            "unpartitioned: every query plans every manifest whatever their layout, so no rewrite "
            "prunes more (the next append's merge also folds small manifests together)"
        )
    if len(data) <= 1:
        return f"{len(data)} data manifest: nothing to cluster"
    live = h.judged_partitions
    if len(live) and int(live.bounds.max()) <= 1:
        return "aligned: no partition is planned from more than one manifest"
    return None


def weigh(
    h: Health,
    meta: Metadata,
    sim: Simulated,
    model: PlanningModel | None,
    measured: list[dict[str, Any]] | None = None,
) -> Weighed:
    """The verdict on rewriting this table state into the simulated layout `sim`: on the rewrite
    `measured` on a scratch copy where its windows were measured (`measured_verdict`; the rules
    are then reasons beside it), else on the prediction."""
    fine = already_fine(h, meta)
    if fine is not None and not measured:
        return Weighed(HEALTHY, fine)
    parts = meta.partitions.copy()
    mans = sim.manifests.copy()
    bounds_counts(parts, mans, meta.specs)
    live = parts[parts.files > 0]
    bounds_after = {"max": float(live.bounds.max()), "median": float(live.bounds.median())}
    pairs = [(w, window_kept(meta, mans, parts, w["window"])) for w in h.windows]
    # rewrite_manifests leaves delete manifests as they are: planning still opens them after.
    pairs = [(now, _with_deletes(now, later)) for now, later in pairs if later is not None]
    windows = [_pair(now, later) for now, later in pairs]
    if model is not None and windows:
        _predict(windows, h, [now for now, _ in pairs], model)
    rules = [fine] if fine else []
    if h.verdict == HEALTHY:
        rules.append("no rule tripped: " + _rules_line(h))
    found = measured_verdict(h.verdict, measured or [], rules)
    if found is not None:
        return Weighed(*found, windows, bounds_after, ON_COPY)
    if fine is not None:
        return Weighed(HEALTHY, fine)
    if h.verdict == HEALTHY:
        return Weighed(HEALTHY, "no rule tripped: " + _rules_line(h), windows, bounds_after)
    if not sim.changes:
        why = (
            "no data manifest of the default spec, the only one rewrite_manifests rewrites"
            if sim.tasks == 0
            else f"rewrite_manifests would leave it as it is: one manifest's worth at {sim.target:,} B"
        )
        return Weighed(HEALTHY, why, windows, bounds_after)
    verdict, why = _decide(h, windows, bounds_after, model is not None)
    return Weighed(verdict, why, windows, bounds_after)


def _predict(rows: list[dict[str, Any]], h: Health, now: list[dict[str, Any]], model: PlanningModel) -> None:
    """Each window's planning after the rewrite (in place): anchored on its plans measured now
    where it was measured (`anchor.anchored`), else the calibration's absolute prediction and its
    error on the gain."""
    gains = model.gains([window_reads(n) for n in now], [r["after_reads"] for r in rows])
    after = model.predictions([r["after_reads"] for r in rows])
    for row, window, g, p in zip(rows, now, gains, after, strict=True):
        ratios = model_ratios(window.get("predicted"), p)
        row |= g | {"basis": CALIBRATION, "model_now_ms": row["now_ms"], "model": ratios}
        row |= {"after_ms": p["ms"], "after_range_ms": p["range_ms"], "ratio": (ratios or {}).get("ratio")}
        row |= anchored(window, ratios, h.fixed) or {}


def decided(h: Health, ratios: dict[str, dict[str, float] | None]) -> bool:
    """Whether more plans could change the verdict on no window: each window of `h` anchored on
    the plans it holds now and its model ratios (`ratios`, by window; `anchor.undecided`)."""
    rows = (anchored(w, ratios.get(w["window"]), h.fixed) for w in h.windows)
    return not any(r is not None and undecided(r, MIN_GAIN_SHARE) for r in rows)


def _rules_line(h: Health) -> str:
    b = h.stats["bounds"]
    return f"a partition is planned from {plural(b['median'], 'manifest')} (median), {b['max']:g} at most"


DELETE_READS = ("delete_manifests", "delete_entries_read", "delete_manifest_bytes")


def _with_deletes(now: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The window after a rewrite of its data manifests, with the delete manifests it reads now."""
    return after | {k: now[k] for k in DELETE_READS if k in now}


def _pair(now: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {
        "window": now["window"],
        "now_manifests": now["manifests"],
        "after_manifests": after["manifests"],
        "now_bytes": now["manifest_bytes"],
        "after_bytes": after["manifest_bytes"],
        "now_ms": (now.get("predicted") or {}).get("ms"),
        "after_reads": window_reads(after),
    }


def slower(w: dict[str, Any], modelled: bool) -> bool:
    """Whether a window plans worse after: more manifests, or predicted slower by more than the
    model's error on the difference and by MIN_GAIN_SHARE of its planning (the advice's own bar)."""
    if w["after_manifests"] > w["now_manifests"]:
        return True
    if not modelled or w.get("gain_ms") is None or not w.get("now_ms"):
        return False
    loss = -w["gain_ms"]
    return loss > w["error_ms"] and loss >= MIN_GAIN_SHARE * w["now_ms"]


def worth(w: dict[str, Any]) -> bool:
    """Whether one window's saving is worth a rewrite: beyond its uncertainty (`error_ms`: the
    plans' noise and the ratio's error, or the calibration's error) and at least MIN_GAIN_SHARE of
    its planning now."""
    if w.get("gain_ms") is None or not w.get("now_ms"):
        return False
    return w["gain_ms"] > w["error_ms"] and w["gain_ms"] >= MIN_GAIN_SHARE * w["now_ms"]


def _saving(w: dict[str, Any], share: float) -> str:
    """The saving of one window in words: measured now and predicted after, or the calibration's."""
    if w.get("basis") == MEASURED:
        return (
            f"{w['now_ms']:.0f} ms measured now, ~{w['after_ms']:.0f} ms after (x{w['ratio']:.2f}, the "
            f"model's ratio): {w['gain_ms']:+.1f} ms, ±{w['error_ms']:.1f} ms (plans' noise "
            f"±{w['noise_ms']:.1f}, the ratio's error), {share:.0%} of the planning"
        )
    return (
        f"predicted {w['gain_ms']:+.1f} ms saved (calibration, nothing measured; model error "
        f"±{w['error_ms']:.1f} ms, {share:.0%} of {w['now_ms']:.0f} ms)"
    )


def _decide(
    h: Health, windows: list[dict[str, Any]], bounds_after: dict[str, float], modelled: bool
) -> tuple[str, str]:
    n_now = int((h.manifests.content == DATA).sum())
    worse = [w for w in windows if slower(w, modelled)]
    if worse:
        w = worse[0]
        return HEALTHY, (
            f"not worth a rewrite: it would leave the {w['window']} window planning "
            f"{w['now_manifests']} -> {w['after_manifests']} manifests"
            + (f" ({-w['gain_ms']:+.1f} ms)" if modelled else "")
        )
    if windows and all(w["after_manifests"] == w["now_manifests"] for w in windows):
        reads = ", ".join(f"{w['window']} {w['now_manifests']}" for w in windows)
        return HEALTHY, f"at the layout a rewrite would give: each window plans as many manifests ({reads})"
    if modelled and windows:
        best = max(windows, key=lambda w: w["gain_ms"] - w["error_ms"])
        share = best["gain_ms"] / best["now_ms"] if best["now_ms"] else 0.0
        reads = f"{best['window']} plans {best['now_manifests']} -> {best['after_manifests']} manifests"
        line = f"{reads}, {_saving(best, share)}"
        if worth(best):
            return h.verdict, f"worth a rewrite: {line}"
        return HEALTHY, (
            f"not worth a rewrite: at best {line}, within the noise or below "
            f"{MIN_GAIN_SHARE:.0%} of the planning"
        )
    if windows:
        halved = [w for w in windows if w["after_manifests"] * 2 <= w["now_manifests"]]
        if halved:
            w = halved[0]
            return h.verdict, (
                f"worth a rewrite: {w['window']} plans {w['now_manifests']} -> {w['after_manifests']} "
                "manifests (no cost model fitted: judged by manifests planned)"
            )
        return HEALTHY, (
            "not worth a rewrite: no window plans half as many manifests after it (no cost model fitted)"
        )
    now_median = float(h.stats["bounds"]["median"])
    if bounds_after["median"] * 2 <= now_median:
        return h.verdict, (
            "worth a rewrite: a partition is planned from "
            f"{plural(bounds_after['median'], 'manifest')} after it, "
            f"{now_median:g} now (median; {plural(n_now, 'data manifest')})"
        )
    return HEALTHY, (
        "not worth a rewrite: a partition would be planned from "
        f"{plural(bounds_after['median'], 'manifest')} "
        f"after it, {now_median:g} now (median)"
    )


def _measured(row: dict[str, Any]) -> bool:
    return (
        row.get("before_measured_ms") is not None
        and row.get("after_measured_ms") is not None
        and row.get("measured_plans", 0) >= MIN_PLANS
    )


def _apart(row: dict[str, Any]) -> tuple[float, float]:
    """(now's low - after's high, after's low - now's high): above 0 where the medians' intervals
    do not meet, faster or slower."""
    now, after = row["before_measured_ms"], row["after_measured_ms"]
    now_low, now_high = row.get("before_measured_range_ms") or (now, now)
    after_low, after_high = row.get("after_measured_range_ms") or (after, after)
    return now_low - after_high, after_low - now_high


def measured_faster(row: dict[str, Any]) -> bool:
    """Whether a window plans faster after the rewrite, measured: both medians of MIN_PLANS plans
    at least, the after's interval wholly below the now's, and by MIN_GAIN_SHARE of the now."""
    if not _measured(row):
        return False
    now, after = row["before_measured_ms"], row["after_measured_ms"]
    return _apart(row)[0] > 0 and now - after >= MIN_GAIN_SHARE * now


def measured_slower(row: dict[str, Any]) -> bool:
    """Whether a window plans slower after, measured, beyond both intervals and by MIN_GAIN_SHARE."""
    if not _measured(row):
        return False
    now, after = row["before_measured_ms"], row["after_measured_ms"]
    return _apart(row)[1] > 0 and after - now >= MIN_GAIN_SHARE * now


def measured_verdict(level: str, rows: list[dict[str, Any]], rules: list[str]) -> tuple[str, str] | None:
    """The verdict on the rewrite measured on a scratch copy (`rows`: per window, manifests and
    planning before and after, as `Diagnosis.before_after` gives them), at the rules' `level` when
    they tripped, else the first level that advises; the rules that would have called the table
    healthy (`rules`) are said beside it. None when no window was measured."""
    timed = [r for r in rows if _measured(r)]
    if not timed:
        return None
    beside = f" (the rules alone: {'; '.join(rules)})" if rules else ""
    worse = [r for r in rows if r["after_manifests"] > r["before_manifests"] or measured_slower(r)]

    def line(r: dict[str, Any]) -> str:
        now, after = r["before_measured_ms"], r["after_measured_ms"]
        return (
            f"{r['window']} plans {r['before_manifests']} -> {r['after_manifests']} manifests, "
            f"{now:.0f} -> {after:.0f} ms measured on a scratch copy ({(after - now) / now:+.0%})"
        )

    if worse:
        return HEALTHY, f"not worth a rewrite: {line(worse[0])}{beside}"
    faster = [r for r in timed if measured_faster(r)]
    best = max(faster or timed, key=lambda r: r["before_measured_ms"] - r["after_measured_ms"])
    if faster:
        advised = level if level != HEALTHY else LEVELS[1]
        return advised, f"worth a rewrite: {line(best)}, beyond both medians' intervals{beside}"
    return HEALTHY, (
        f"not worth a rewrite: at best {line(best)}, within the plans' noise or below "
        f"{MIN_GAIN_SHARE:.0%} of the planning{beside}"
    )
