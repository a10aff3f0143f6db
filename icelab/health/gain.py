"""Whether a manifest rewrite is worth running: what the simulated rewrite (`rewrite.simulate`)
would change in what each window plans, and the verdict that follows.

A rewrite is advised only when the rules of the policy trip (as manifest_health's) and the
simulated layout improves the plan of some window by more than the cost model's error on that
gain and by at least MIN_GAIN_SHARE of the window's planning, and makes no window plan more
manifests, or slower by as much. Without a fitted model, the manifests each window plans
decide: at least half fewer for some window, and more for none. A table no rewrite can improve
is healthy before any of that: unpartitioned (every query plans every manifest whatever their
layout), one data manifest, or already aligned (no partition planned from more than one manifest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icelab.health.check import Health, bounds_counts, window_kept
from icelab.health.forecast import PlanningModel, window_reads
from icelab.health.reader import DATA, Metadata
from icelab.health.rewrite import Simulated

# A rewrite must save at least this share of a window's predicted planning to be worth its commit.
MIN_GAIN_SHARE = 0.10
HEALTHY = "healthy"


@dataclass
class Weighed:
    """The verdict on a rewrite, why in one line, and each window now and after it."""

    verdict: str
    why: str
    windows: list[dict[str, Any]] = field(default_factory=list)
    bounds_after: dict[str, float] = field(default_factory=dict)

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
    live = h.live_partitions
    if len(live) and int(live.bounds.max()) <= 1:
        return "aligned: no partition is planned from more than one manifest"
    return None


def weigh(h: Health, meta: Metadata, sim: Simulated, model: PlanningModel | None) -> Weighed:
    """The verdict on rewriting this table state into the simulated layout `sim`."""
    fine = already_fine(h, meta)
    if fine is not None:
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
        gains = model.gains([window_reads(n) for n, _ in pairs], [window_reads(a) for _, a in pairs])
        for row, g in zip(windows, gains, strict=True):
            row |= g
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


def _rules_line(h: Health) -> str:
    b = h.stats["bounds"]
    return f"a partition is planned from {b['median']:g} manifests (median), {b['max']:g} at most"


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
    if modelled and windows:
        best = max(windows, key=lambda w: w["gain_ms"] - w["error_ms"])
        share = best["gain_ms"] / best["now_ms"] if best["now_ms"] else 0.0
        line = (
            f"{best['window']} plans {best['now_manifests']} -> {best['after_manifests']} manifests, "
            f"predicted {best['gain_ms']:+.1f} ms saved (model error ±{best['error_ms']:.1f} ms, "
            f"{share:.0%} of {best['now_ms']:.0f} ms)"
        )
        if best["gain_ms"] > best["error_ms"] and share >= MIN_GAIN_SHARE:
            return h.verdict, f"worth a rewrite: {line}"
        return HEALTHY, (
            f"not worth a rewrite: at best {line}, within the model's error or below "
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
            f"worth a rewrite: a partition is planned from {bounds_after['median']:g} manifests after it, "
            f"{now_median:g} now (median; {n_now} data manifests)"
        )
    return HEALTHY, (
        f"not worth a rewrite: a partition would be planned from {bounds_after['median']:g} manifests "
        f"after it, {now_median:g} now (median)"
    )
