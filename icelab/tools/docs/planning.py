"""The generated blocks of docs/planning.md and docs/protocol.md: the planning runs' figures.

Every figure comes from the reference runs of `manifest_8mb` and `manifest_sweep` (and, for how
the as-ingested manifests span the days, `manifest_health`), computed by `icelab.analysis`
(`planning_figures`, `planning_claims`) and written by the templates under `templates/planning/`.
The verdicts of the claims section stay typed, but each is checked against the data: a result that
no longer supports a verdict stops `icelab docs` (`ClaimError`) rather than print the verdict
beside numbers that contradict it.
"""

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
    """The two planning reference runs: manifest_8mb, then manifest_sweep."""
    return [reference_run(results, e) for e in (EIGHT_MB, SWEEP)]


def _health(results: Path) -> dict[str, dict]:
    return health_report(reference_run(results, "manifest_health"))


def profiles_table(results: Path) -> str:
    """The table states: manifests and their bytes per profile (the sweep's run.json)."""
    run = reference_run(results, SWEEP)
    found = figures.profiles(run, _health(results))
    return render("planning/profiles.md.j2", provenance=provenance(run), **found)


def windows_sentence(results: Path) -> str:
    """The windows both planning runs measure, from their config."""
    return render("planning/windows.md.j2", windows=figures.same_windows(*_both(results)))


def eight_mb_table(results: Path) -> str:
    """manifest_8mb: median planning per variant and window, both queries, with growth and scans."""
    run = reference_run(results, EIGHT_MB)
    return render("planning/eight_mb.md.j2", provenance=provenance(run), **figures.eight_mb(run))


def clocks(results: Path) -> str:
    """manifest_8mb: Iceberg's own planning clock beside the harness's, per window."""
    return render("planning/clocks.md.j2", **figures.clocks(reference_run(results, EIGHT_MB)))


def execution(results: Path) -> str:
    """manifest_8mb: the widest window's execution, and the harness's overhead (overhead.csv)."""
    return render("planning/execution.md.j2", **figures.execution(reference_run(results, EIGHT_MB)))


def sweep_table(results: Path) -> str:
    """manifest_sweep: median planning per profile and window, growth on both clocks, manifests read."""
    run = reference_run(results, SWEEP)
    found = figures.sweep(run)
    return render("planning/sweep.md.j2", provenance=provenance(run), minutes=run_minutes(run), **found)


def sweep_notes(results: Path) -> str:
    """manifest_sweep: the nested query's growth, and the manifest counts (deterministic)."""
    return render("planning/sweep_notes.md.j2", **figures.sweep_notes(reference_run(results, SWEEP)))


def pushdown(results: Path) -> str:
    """manifest_sweep: where Iceberg's aggregate push-down answers from metadata, and what it costs."""
    return render("planning/pushdown.md.j2", **figures.pushdown(reference_run(results, SWEEP)))


def claims(results: Path) -> str:
    """The claims section: each typed verdict with the figures behind it, checked against them."""
    return render("planning/claims.md.j2", **claim_figures(*_both(results), _health(results)))


def commits(results: Path) -> str:
    """Which commit each planning run comes from, and whether its tree was clean (env.json)."""
    return render("planning/commits.md.j2", runs=figures.commits(_both(results)))


def protocol_medium(results: Path) -> str:
    """The reference planning run's protocol and what one wide execution costs against planning."""
    run = reference_run(results, EIGHT_MB)
    found = figures.protocol_medium(run)
    return render("planning/protocol_medium.md.j2", provenance=provenance(run), **found)


def protocol_answers(results: Path) -> str:
    """The console verdict of each planning run's answer check (answers.json)."""
    return render(
        "planning/protocol_answers.md.j2",
        runs=[
            {
                "experiment": r.experiment,
                "id": r.run_id,
                "verdict": verdict(json.loads((r.path / ANSWERS).read_text())),
            }
            for r in _both(results)
        ],
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "planning-profiles": profiles_table,
    "planning-windows": windows_sentence,
    "planning-8mb": eight_mb_table,
    "planning-clocks": clocks,
    "planning-execution": execution,
    "planning-sweep": sweep_table,
    "planning-sweep-notes": sweep_notes,
    "planning-pushdown": pushdown,
    "planning-claims": claims,
    "planning-commits": commits,
    "protocol-medium": protocol_medium,
    "protocol-answers": protocol_answers,
}
