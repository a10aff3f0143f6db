"""docs/canonical.md's blocks and claims.md's canonical-claims: the canonical reference run's figures
(`icelab.analysis.canonical_*`, `templates/canonical/`), and what lies outside the run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis import canonical_claims, canonical_plan, canonical_protocol, canonical_versus

# What other page modules take from here (store_page.py, budget.py) besides `load` and `of_run`.
from icelab.analysis.canonical_claims import STUDY_INITIAL as STUDY_INITIAL
from icelab.analysis.canonical_run import Canonical, of_run
from icelab.analysis.canonical_run import interval as run_interval
from icelab.analysis.canonical_run import round_minutes as round_minutes
from icelab.analysis.canonical_run import setup as setup
from icelab.bench.answers import verdict
from icelab.core import units
from icelab.tools.docs.markdown import render
from icelab.tools.docs.readme import duration
from icelab.tools.docs.sources import default_protocol, phase_minutes, provenance, reference_run, steady_rows
from icelab.tools.validate import check_run

EXPERIMENT = "canonical"
PLANNING = "manifest_8mb"  # the planning run whose growth.csv the claim on windows reads

Block = Callable[[Path], str]


def load(results: Path) -> Canonical:
    """The newest complete canonical run under `<results>/reference`, with its figures."""
    return of_run(reference_run(results, EXPERIMENT))


def interval(intervals: pd.DataFrame, variant: str, part: str, invert: bool = False) -> str:
    """` [low, high]` of a geometric mean's bootstrap interval, empty when there is none."""
    return units.interval(run_interval(intervals, variant, part, invert))


def _block(template: str, figures: Callable[[Canonical], dict[str, object]]) -> Block:
    """The block that renders `templates/canonical/<template>.md.j2` with `figures` of the reference run."""

    def generate(results: Path) -> str:
        return render(f"canonical/{template}.md.j2", **figures(load(results)))

    return generate


def _plan(c: Canonical) -> dict[str, object]:
    """The plan facts, nested predicates and the primitives-only queries, from plan_check.csv."""
    plan = canonical_plan
    return {"plan": plan.plan_facts(c), "nested": plan.nested_predicates(c), "primitives": plan.primitives(c)}


def protocol(results: Path) -> str:
    """The warm cache, the rounds, the rotation and what a round costs."""
    c = load(results)
    steady = phase_minutes(c.measurements[steady_rows(c.measurements, c.meta["protocol"]["warmups"])])
    return render("canonical/protocol.md.j2", **canonical_protocol.protocol(c, steady))


def run_paragraph(results: Path) -> str:
    """Which run, how long, its validation and answers, and how the cells are computed."""
    c = load(results)
    return render(
        "canonical/run.md.j2",
        **canonical_protocol.run_facts(c, default_protocol(EXPERIMENT)),
        provenance=provenance(c.run),
        duration=duration(c.run),
        checked=check_run(c.run.path),
        answers=verdict(canonical_protocol.answers(c)["checked"]),
    )


def claims(results: Path) -> str:
    """Which of the study's claims reproduce (the claim on windows from the planning run)."""
    figures = canonical_claims.claims(load(results), reference_run(results, PLANNING))
    return render("canonical/claims.md.j2", **figures)


BLOCKS: dict[str, Block] = {
    "canonical-setups": _block("setups", canonical_protocol.setups),
    "canonical-protocol": protocol,
    "canonical-plan": _block("plan", _plan),
    "canonical-run": run_paragraph,
    "canonical-versus-parquet": _block("versus", canonical_versus.versus_parquet),
    "canonical-gains": _block("gains", canonical_versus.gains),
    "canonical-reading": _block("reading", canonical_versus.reading),
    "canonical-claims": claims,
}
