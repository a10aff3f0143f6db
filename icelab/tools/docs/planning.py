"""The generated blocks of docs/planning.md, docs/claims.md and docs/protocol.md, from the planning
reference runs (and `manifest_health`'s report of how the as-ingested manifests span the days).
A typed verdict the data no longer supports stops `icelab docs` (`ClaimError`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from icelab.analysis import planning_figures as figures
from icelab.analysis.planning_cases import health_report
from icelab.analysis.planning_claims import claims as claim_figures
from icelab.bench.answers import verdict
from icelab.core.runs import Run
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

EIGHT_MB, SWEEP = "manifest_8mb", "manifest_sweep"
ANSWERS = "answers.json"  # a run's answer check, as `icelab.bench.answers` writes it


def _both(results: Path) -> list[Run]:
    return [reference_run(results, e) for e in (EIGHT_MB, SWEEP)]


def _health(results: Path) -> dict[str, dict]:
    return health_report(reference_run(results, "manifest_health"))


def _of(experiment: str, *parts: tuple[str, Callable[[Run], dict]]) -> Callable[[Path], str]:
    """A block of `experiment`'s reference run: each template with its figures and the run's provenance."""

    def block(results: Path) -> str:
        run = reference_run(results, experiment)
        texts = [render(f"planning/{t}.md.j2", provenance=provenance(run), **f(run)) for t, f in parts]
        return "\n\n".join(text.strip("\n") for text in texts) + "\n"

    return block


def profiles(results: Path) -> str:
    """The table states: manifests and their bytes per profile (the sweep's run.json), and the windows."""
    run = reference_run(results, SWEEP)
    found = {**figures.profiles(run, _health(results)), "windows": figures.same_windows(*_both(results))}
    return render("planning/profiles.md.j2", provenance=provenance(run), **found)


def claims(results: Path) -> str:
    """The claims section: each typed verdict with the figures behind it, checked against them."""
    return render("planning/claims.md.j2", **claim_figures(*_both(results), _health(results)))


def protocol_answers(results: Path) -> str:
    """The console verdict of each planning run's answer check (answers.json)."""
    runs = [(r, verdict(json.loads((r.path / ANSWERS).read_text()))) for r in _both(results)]
    return render("planning/protocol_answers.md.j2", runs=runs)


# manifest_8mb: planning at the narrow and the wide window, Iceberg's clock, execution and overhead.
eight_mb = _of(
    EIGHT_MB,
    ("eight_mb", lambda run: {**figures.eight_mb(run), "queries": run.config()["experiment"]["queries"]}),
    ("clocks", figures.clocks),
    ("execution", figures.execution),
)
# manifest_sweep: every profile's planning and growth, the nested query, aggregate push-down.
sweep = _of(
    SWEEP,
    ("sweep", lambda run: {"minutes": run_minutes(run), **figures.sweep(run)}),
    ("sweep_notes", figures.sweep_notes),
    ("pushdown", figures.pushdown),
)
BLOCKS: dict[str, Callable[[Path], str]] = {
    "planning-profiles": profiles,
    "planning-8mb": eight_mb,
    "planning-sweep": sweep,
    "planning-claims": claims,
    "protocol-medium": _of(EIGHT_MB, ("protocol_medium", figures.protocol_medium)),
    "protocol-answers": protocol_answers,
}
