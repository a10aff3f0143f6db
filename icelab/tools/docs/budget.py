"""docs/protocol.md's budget block: a medium run of each experiment with executions, against the
minutes its defaults were chosen to fit on the reference machine. A phase's minutes run from its
first to its last `measured_utc`; the run's from its process's start to its finish (run.json).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.tools.docs import sources
from icelab.tools.docs.canonical import round_minutes
from icelab.tools.docs.markdown import render

# The minutes a medium run of each experiment is meant to take on 2 cores; the experiments'
# conf/experiment/*.yaml set their protocol defaults to fit it.
BUDGET_MINUTES = {"canonical": 60, "manifest_8mb": 20}


def phases(m: pd.DataFrame, protocol: dict) -> dict[str, object]:
    """A run's steady-state minutes and its executed and planning-only measured rounds' minutes."""
    rounds = round_minutes(m[~m["warmup"].astype(bool)])
    executed = rounds.index.get_level_values("executed")
    steady = sources.phase_minutes(m[sources.steady_rows(m, protocol["warmups"])])
    return {"steady": steady, "executed": list(rounds[executed]), "planned": list(rounds[~executed])}


def fits(total: float, executed: list[float], executions: int, budget: float) -> int | None:
    """Executed measured rounds the budget holds: the run's own, plus (or minus) as many median
    executed rounds as the minutes left (or over) cover; None without an executed round."""
    if not executed:
        return None
    return executions + math.floor((budget - total) / float(pd.Series(executed).median()))


def measured(results: Path, experiment: str) -> dict[str, object]:
    """An experiment's reference run against its budget: its minutes, phases, the executed rounds
    the budget holds and today's default `protocol.executions`."""
    run = sources.reference_run(results, experiment)
    protocol, total = run.meta()["protocol"], sources.run_minutes(run)
    if total is None:
        raise ValueError(f"{run.run_id}: run.json has no start or finish time")
    p = phases(stored(run).measurements(), protocol)
    return {
        "provenance": sources.provenance(run),
        "budget": BUDGET_MINUTES[experiment],
        "total": total,
        **p,
        "medians": {k: pd.Series(p[k]).median() for k in ("executed", "planned")},
        "holds": fits(total, p["executed"], protocol["executions"], BUDGET_MINUTES[experiment]),
        "default": sources.default_protocol(experiment)["executions"],
    }


def budget(results: Path) -> str:
    """The table: per experiment, the reference run's minutes by phase against its budget."""
    return render("budget/budget.md.j2", runs={e: measured(results, e) for e in BUDGET_MINUTES})


BLOCKS: dict[str, Callable[[Path], str]] = {"protocol-budget": budget}
