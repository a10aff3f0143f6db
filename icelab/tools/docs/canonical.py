"""docs/canonical.md's generated blocks: the canonical reference run's figures, computed by
`icelab.analysis.canonical_*` (run, plan, protocol, versus, claims) and rendered by
`templates/canonical/`. This module finds the reference run and what lies outside the run (today's
defaults, `icelab validate`'s verdict, the planning experiment's run) and hands them down.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis import (
    canonical_claims,
    canonical_plan,
    canonical_protocol,
    canonical_run,
    canonical_versus,
)

# What other page modules take from here (storage.py, budget.py) besides `load` and `of_run`.
from icelab.analysis.canonical_claims import STUDY_INITIAL as STUDY_INITIAL
from icelab.analysis.canonical_run import Canonical, of_run
from icelab.analysis.canonical_run import round_minutes as round_minutes
from icelab.analysis.canonical_run import setup as setup
from icelab.bench.answers import verdict
from icelab.core import units
from icelab.tools.docs.markdown import render
from icelab.tools.docs.readme import duration
from icelab.tools.docs.sources import default_protocol, phase_minutes, provenance, reference_run, steady_rows
from icelab.tools.validate import check_run

EXPERIMENT = "canonical"
# The planning experiment whose growth.csv the claim on windows reads.
PLANNING = "manifest_8mb"

Block = Callable[[Path], str]


def load(results: Path) -> Canonical:
    """The newest complete canonical run under `<results>/reference`, with its figures."""
    return of_run(reference_run(results, EXPERIMENT))


def interval(intervals: pd.DataFrame, variant: str, part: str, invert: bool = False) -> str:
    """` [low, high]` of a geometric mean's bootstrap interval (`canonical_run.interval`) as the
    pages print it, empty when there is none."""
    return units.interval(canonical_run.interval(intervals, variant, part, invert))


def _block(template: str, figures: Callable[[Canonical], dict[str, object]]) -> Block:
    """The block that renders `templates/canonical/<template>.md.j2` with `figures` of the reference run."""

    def generate(results: Path) -> str:
        return render(f"canonical/{template}.md.j2", **figures(load(results)))

    generate.__doc__ = figures.__doc__
    return generate


workload = _block("workload", canonical_plan.workload)
setups_table = _block("setups", canonical_protocol.setups)
plan_facts = _block("plan", canonical_plan.plan_facts)
nested_predicates = _block("nested", canonical_plan.nested_predicates)
primitives = _block("primitives", canonical_plan.primitives)
versus_parquet = _block("versus", canonical_versus.versus_parquet)
gains_table = _block("gains", canonical_versus.gains)
per_query = _block("per_query", canonical_versus.per_query)
reading = _block("reading", canonical_versus.reading)


def protocol(results: Path) -> str:
    """The protocol paragraph: the warm cache, the rounds, the rotation and what a round costs."""
    c = load(results)
    m = c.measurements
    steady = phase_minutes(m[steady_rows(m, c.meta["protocol"]["warmups"])])
    return render("canonical/protocol.md.j2", **canonical_protocol.protocol(c, steady))


def answers(results: Path) -> str:
    """The correctness sentence: answers.json's verdict, as the run printed it."""
    figures = canonical_protocol.answers(load(results))
    return render("canonical/answers.md.j2", **figures, verdict=verdict(figures["checked"]))


def run_paragraph(results: Path) -> str:
    """Which run, on what, and how the cells are computed."""
    c = load(results)
    checked = check_run(c.run.path)
    return render(
        "canonical/run.md.j2",
        **canonical_protocol.run_facts(c, default_protocol(EXPERIMENT)),
        provenance=provenance(c.run),
        problems=len(checked.problems),
        older=checked.older,
    )


def claims(results: Path) -> str:
    """Which of the study's claims reproduce, with this run's figures (and the planning
    experiment's growth.csv for the claim on windows)."""
    figures = canonical_claims.claims(load(results), reference_run(results, PLANNING))
    return render("canonical/claims.md.j2", **figures)


def duration_paragraph(results: Path) -> str:
    """Which dataset the figures are at, and how long the reference run took."""
    return render("canonical/duration.md.j2", duration=duration(load(results).run))


BLOCKS: dict[str, Block] = {
    "canonical-duration": duration_paragraph,
    "canonical-workload": workload,
    "canonical-setups": setups_table,
    "canonical-protocol": protocol,
    "canonical-answers": answers,
    "canonical-plan": plan_facts,
    "canonical-nested": nested_predicates,
    "canonical-primitives": primitives,
    "canonical-run": run_paragraph,
    "canonical-versus-parquet": versus_parquet,
    "canonical-gains": gains_table,
    "canonical-per-query": per_query,
    "canonical-reading": reading,
    "canonical-claims": claims,
}
