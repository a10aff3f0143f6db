"""The study's figures at the top of the report, each with one sentence of what it shows.

A chart is one of the study's figures when its title names one (`Figure 10`). The sentence under
it is a template (`SENTENCES`, by the run's task) filled with figures named and computed here
from the run's own stored files, so the words stay fixed and the numbers come from the run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pandas as pd

from icelab.charts import Chart
from icelab.core.runs import Run

# The study's comparison first (planning against the window), then the queries, then upkeep.
ORDER = (10, 8, 9, 6, 7)
FIGURE = re.compile(r"Figure (\d+)")

SENTENCES: dict[str, str] = {
    "planning": "From {short} to {long}, `{query}` planning grew {growth}.",
    "canonical": (
        "Against Parquet, total time per setup (geometric mean over {queries} queries, "
        "below 1x is faster): {setups}."
    ),
    "manifest_health": "Manifests per table state, and the rules' verdict: {states}.",
    "doctor": "Manifests per table state, and the doctor's verdict: {states}.",
}


def figure_number(chart: Chart) -> int | None:
    """The study's figure a chart draws (`Figure 10` in its title), else None."""
    found = FIGURE.search(chart.title)
    return int(found.group(1)) if found else None


def _planning(run: Run) -> dict[str, object]:
    growth = pd.read_csv(run.path / "growth.csv")
    query = growth["query_id"].iloc[0]
    rows = growth[growth["query_id"] == query]
    parts = [f"{r.planning_ratio:.2f}x for {r.variant}" for r in rows.itertuples()]
    windows = list(json.loads((run.path / "run.json").read_text()).get("ratio") or ["180d", "1d"])
    return {"short": windows[-1], "long": windows[0], "query": query, "growth": ", ".join(parts)}


def _canonical(run: Run) -> dict[str, object]:
    setups = pd.read_csv(run.path / "setups.csv")
    parts = [f"{r.variant} {r.total_ms_geomean:.2f}x" for r in setups.itertuples()]
    return {"queries": int(setups["queries"].max()), "setups": ", ".join(parts)}


def _health(run: Run) -> dict[str, object]:
    report = json.loads((run.path / "report.json").read_text())
    # manifest_health writes a list of states; the doctor, a report with its states in it.
    states = report["states"] if isinstance(report, dict) else report
    return {"states": ", ".join(f"{s['state']} {s['manifests']} ({s['verdict']})" for s in states)}


FIGURES: dict[str, Callable[[Run], dict[str, object]]] = {
    "planning": _planning,
    "canonical": _canonical,
    "manifest_health": _health,
    "doctor": _health,
}


def sentence(run: Run) -> str:
    """What the run's study figures show, in one sentence; empty when its task has none or its
    files lack a figure (the chart's own caption still stands)."""
    if run.task not in SENTENCES:
        return ""
    try:
        return SENTENCES[run.task].format(**FIGURES[run.task](run))
    except (OSError, KeyError, ValueError, IndexError):
        return ""


def study_charts(runs: dict[str, Run], charts: dict[str, list[Chart]]) -> list[tuple[int, str, Chart]]:
    """Every chart that draws one of the study's figures: (figure, experiment, chart), in ORDER."""
    found = [
        (n, experiment, chart)
        for experiment in runs
        for chart in charts.get(experiment, [])
        if (n := figure_number(chart)) is not None
    ]
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(found, key=lambda f: (rank.get(f[0], len(ORDER)), f[1]))
