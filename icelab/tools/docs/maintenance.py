"""The generated blocks of docs/maintenance.md: manifest health and snapshot expiry at medium.

Figures come from the reference runs of `manifest_health` and `snapshot_expiry`
(`icelab.analysis.table_upkeep`) and the rules and settings of their config.yaml; provenance from
each run's env.json. Sizes are decimal: a kB is 1,000 bytes, an MB 1,000,000.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import table_upkeep
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def rules(results: Path) -> str:
    """The policy's thresholds as the reference run used them (its config's `experiment.rules`)."""
    run = reference_run(results, "manifest_health")
    return render(
        "maintenance/rules.md.j2", provenance=provenance(run), rules=run.config()["experiment"]["rules"]
    )


def health(results: Path) -> str:
    """The health report before and after the rewrite."""
    run = reference_run(results, "manifest_health")
    before, *after = table_upkeep.health_states(run)
    return render(
        "maintenance/health.md.j2",
        provenance=provenance(run),
        span_days=before["report"]["day_partitions"],
        before=before,
        after=after,
        target=run.config()["experiment"].get("rewrite_target"),
    )


def expiry_table(results: Path) -> str:
    """The timeline at its first, middle and last simulated day, and after expiry."""
    run = reference_run(results, "snapshot_expiry")
    cfg = run.config()
    return render(
        "maintenance/expiry.md.j2",
        provenance=provenance(run),
        commits=cfg["dataset"]["commits"],
        e=cfg["experiment"],
        **table_upkeep.expiry_points(run),
    )


def expiry_notes(results: Path) -> str:
    """What expiry removed, what it kept (rows, checksums), and what it did not change."""
    run = reference_run(results, "snapshot_expiry")
    cfg = run.config()
    effects = table_upkeep.expiry_effects(run)
    return render(
        "maintenance/expiry_notes.md.j2",
        b=effects["summary"]["before"],
        a=effects["summary"]["after"],
        commits=cfg["dataset"]["commits"],
        repetitions=cfg["experiment"]["probe_repetitions"],
        **effects,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "maintenance-rules": rules,
    "maintenance-health": health,
    "maintenance-expiry": expiry_table,
    "maintenance-expiry-notes": expiry_notes,
}
