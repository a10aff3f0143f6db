"""The generated blocks of docs/maintenance.md: manifest health and snapshot expiry at medium, from
the `manifest_health` and `snapshot_expiry` reference runs (`icelab.analysis.table_upkeep`) and
their config.yaml. Sizes are decimal: a kB is 1,000 bytes, an MB 1,000,000."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import table_upkeep
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def health(results: Path) -> str:
    """The policy's thresholds as the run used them, and the health report before and after the rewrite."""
    run = reference_run(results, "manifest_health")
    experiment = run.config()["experiment"]
    return render(
        "maintenance/health.md.j2",
        provenance=provenance(run),
        states=table_upkeep.health_states(run),
        rules=experiment["rules"],
        target=experiment.get("rewrite_target"),
    )


def expiry_notes(results: Path) -> str:
    """The timeline at its first, middle and last simulated day and after expiry; what expiry
    removed, what it kept (rows, checksums), and what it did not change."""
    run = reference_run(results, "snapshot_expiry")
    cfg = run.config()
    effects = table_upkeep.expiry_effects(run)
    return render(
        "maintenance/expiry.md.j2",
        provenance=provenance(run),
        commits=cfg["dataset"]["commits"],
        e=cfg["experiment"],
        b=effects["summary"]["before"],
        a=effects["summary"]["after"],
        **{**table_upkeep.expiry_points(run), **effects},
    )


BLOCKS: dict[str, Callable[[Path], str]] = {"maintenance-health": health, "maintenance-expiry": expiry_notes}
