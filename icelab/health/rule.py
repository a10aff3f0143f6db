"""Predicting Iceberg planning time from the manifest bytes a query keeps, by a rule measured here.

The doctor predicts with the rule the planning experiments measured, not with the planning cost
model (`icelab costmodel`, fitted on metadata-scale runs): Iceberg's planning clock follows the
bytes of the manifests a window keeps (docs/planning.md, "Which of the study's claims reproduce").
The rule's two numbers come from a stored planning run, never from a typed constant: per Iceberg
table state, Iceberg's own `totalPlanningDuration` at the narrowest window that reads every
manifest, over that state's manifest megabytes (median over states); plus Spark's share (the
harness's planning time minus Iceberg's, median over every Iceberg row).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from icelab.core.contract import read_measurements
from icelab.core.runs import Run, find_runs

QUERY = "count_window"


@dataclass(frozen=True)
class PlanningRule:
    """Planning ms = spark_ms + ms_per_mb x MB of manifests kept."""

    ms_per_mb: float
    spark_ms: float
    run: str  # <experiment>/<run_id> it was measured in
    dataset: str
    states: int  # Iceberg table states it is the median of

    def predict_ms(self, manifest_bytes: float) -> float:
        """Predicted planning time for a query that keeps `manifest_bytes` of manifests."""
        return self.spark_ms + self.ms_per_mb * manifest_bytes / 1e6

    def describe(self) -> str:
        return (
            f"{self.ms_per_mb:.1f} ms per MB of manifests kept + {self.spark_ms:.0f} ms of Spark, "
            f"measured in run {self.run} ({self.dataset}, median of {self.states} table states)"
        )


def rule_from_run(run: Run) -> PlanningRule | None:
    """The rule one stored planning run gives; None when it holds no usable Iceberg state."""
    info = run.meta()
    variants = info.get("variants") or {}
    try:
        rows = read_measurements(run.path)
    except (OSError, ValueError):
        return None
    rows = rows[(~rows.warmup) & (rows.status == "ok") & (rows.format == "iceberg")]
    if QUERY in set(rows.query_id):
        rows = rows[rows.query_id == QUERY]
    per_mb = []
    for variant, state in variants.items():
        if not variant.startswith("iceberg/") or not state.get("manifest_bytes") or state.get("spark_conf"):
            continue
        mine = rows[rows.variant == variant]
        full = mine[mine.manifests_scanned == mine.manifests_total].dropna(subset=["iceberg_planning_ms"])
        if full.empty:
            continue
        narrowest = full[full.window_hours == full.window_hours.min()]
        per_mb.append(float(narrowest.iceberg_planning_ms.median()) / (state["manifest_bytes"] / 1e6))
    spark_share = (rows.planning_ms - rows.iceberg_planning_ms).dropna()
    if not per_mb or spark_share.empty:
        return None
    return PlanningRule(
        ms_per_mb=statistics.median(per_mb),
        spark_ms=float(spark_share.median()),
        run=f"{run.experiment}/{run.run_id}",
        dataset=str(info.get("dataset", "?")),
        states=len(per_mb),
    )


def measured_rule(results: list[Path]) -> PlanningRule | None:
    """The rule of the complete planning run with the most Iceberg table states (the newest
    among equals) under any of `results`; None when no stored run gives one."""
    runs: list[Run] = []
    for root in results:
        if root.is_dir():
            runs += [r for r in find_runs(root) if r.task == "planning" and r.complete]
    by_states = sorted(runs, key=lambda r: (_states(r), r.run_id), reverse=True)
    for run in by_states:
        rule = rule_from_run(run)
        if rule is not None:
            return rule
    return None


def _states(run: Run) -> int:
    path = run.path / "run.json"
    try:
        variants = json.loads(path.read_text()).get("variants") or {}
    except (OSError, ValueError):
        return 0
    return sum(1 for v in variants if v.startswith("iceberg/"))
