"""docs/protocol.md's budget block: what a medium run of each experiment with executions cost on
this machine, phase by phase, against the minutes its defaults were chosen to fit.

A phase's minutes run from its first to its last `measured_utc`; the run's from its process's
start to its finish (run.json). "Would fit" is how many executed measured rounds the budget
holds at the run's own median executed round, once everything else the run did is paid.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.dataset_reads import dataset_name
from icelab.analysis.stored_run import stored
from icelab.tools.docs.canonical import round_minutes
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import (
    default_protocol,
    phase_minutes,
    provenance,
    reference_run,
    run_minutes,
    steady_rows,
)

# The minutes a medium run of each experiment is meant to take on 2 cores; the experiments'
# conf/experiment/*.yaml set their protocol defaults to fit it.
BUDGET_MINUTES = {"canonical": 60, "manifest_8mb": 20}


def phases(m: pd.DataFrame, protocol: dict) -> dict[str, object]:
    """A run's phases from its measurements: steady state, warm-up rounds, executed and
    planning-only measured rounds (minutes each), and its measured cases."""
    steady = steady_rows(m, protocol["warmups"])
    warm = m["warmup"].astype(bool)
    measured = m[~warm]
    rounds = round_minutes(measured)
    executed = rounds.index.get_level_values("executed")
    return {
        "steady": phase_minutes(m[steady]),
        "warmups": phase_minutes(m[warm & ~steady]),
        "executed": list(rounds[executed]),
        "planned": list(rounds[~executed]),
        "cases": int(len(measured.groupby(["query_id", "window", "variant"]))),
    }


def fits(total: float, executed: list[float], executions: int, budget: float) -> int | None:
    """Executed measured rounds the budget holds: the run's own, plus (or minus) as many median
    executed rounds as the minutes left (or over) cover; None without an executed round."""
    if not executed:
        return None
    per_round = float(pd.Series(executed).median())
    return executions + math.floor((budget - total) / per_round)


def measured(results: Path, experiment: str) -> dict[str, object]:
    """An experiment's reference run against its budget, as numbers: the run, its dataset, its
    protocol and total minutes, its phases (and their rounds' medians), the executed rounds the
    budget holds and today's default."""
    run = reference_run(results, experiment)
    protocol = run.meta()["protocol"]
    total = run_minutes(run)
    if total is None:
        raise ValueError(f"{run.run_id}: run.json has no start or finish time")
    p = phases(stored(run).measurements(), protocol)
    return {
        "run": run,
        "provenance": provenance(run),
        "dataset": dataset_name(run),
        "budget": BUDGET_MINUTES[experiment],
        "protocol": protocol,
        "total": total,
        **p,
        "medians": {k: pd.Series(p[k]).median() for k in ("executed", "planned")},
        "holds": fits(total, p["executed"], protocol["executions"], BUDGET_MINUTES[experiment]),
        "default": default_protocol(experiment)["executions"],
    }


def budget(results: Path) -> str:
    """The table: per experiment, the reference run's minutes by phase against its budget."""
    return render("budget/budget.md.j2", runs={e: measured(results, e) for e in BUDGET_MINUTES})


BLOCKS: dict[str, Callable[[Path], str]] = {"protocol-budget": budget}
