"""The README's generated blocks: the experiment table with the reference runs' durations."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from icelab.core import units
from icelab.core.runs import Run, find_runs, latest_runs
from icelab.tools.docs.sources import run_minutes


@dataclass(frozen=True)
class Experiment:
    """One experiment config as the README's table shows it."""

    name: str
    measures: str
    draws: str
    doc: str


EXPERIMENTS = (
    Experiment("datagen", "build (or reuse) and verify a dataset in both formats", "summary", "dataset.md"),
    Experiment("verify", "Parquet and Iceberg hold identical rows (Spark and DuckDB)", "-", "dataset.md"),
    Experiment("smoke", "CI's planning benchmark on tiny", "Figure 10 charts", "planning.md"),
    Experiment(
        "manifest_8mb",
        "planning vs window: Parquet, Iceberg as ingested, 8 MB manifests",
        "Figure 10",
        "planning.md",
    ),
    Experiment(
        "manifest_sweep",
        "planning vs window over every manifest profile",
        "Figure 10 per profile",
        "planning.md",
    ),
    Experiment(
        "manifest_health",
        "manifests per partition, verdict, rewrite on a copy",
        "Figures 6, 7",
        "maintenance.md",
    ),
    Experiment(
        "doctor",
        "manifest health, verdict and advice on any Iceberg table (`table=...`)",
        "Figures 6, 7",
        "doctor.md",
    ),
    Experiment(
        "snapshot_expiry",
        "metadata, commit and planning as snapshots pile up",
        "expiry chart",
        "maintenance.md",
    ),
    Experiment(
        "canonical", "23 queries, Parquet vs Iceberg initial/optimized setups", "Figures 8, 9", "canonical.md"
    ),
    Experiment(
        "metadata_scale",
        "planning only, on metadata of 200k to 10M data files: layouts, planning modes, windows",
        "planning vs files",
        "metadata-scale.md",
    ),
    Experiment(
        "schema_evolution",
        "schema-change scenarios on real tables vs the checker",
        "outcome table",
        "schema-evolution.md",
    ),
)


def duration(run: Run) -> str:
    """`<dataset>, <minutes> min` from run.json: from its process's start (else the run
    directory's opening) to its finish; what is missing, said. A doctor run names its table's size."""
    dataset = (run.config().get("dataset") or {}).get("name", "?")
    meta = run.meta()
    if run.experiment == "doctor":
        entries = json.loads((run.path / "report.json").read_text())["reader"]["entries"]
        dataset = f"{entries:,} entries"
    if run.experiment == "metadata_scale":
        files = [state["data_files"] for state in meta.get("states", {}).values()]
        dataset = f"{min(files):,} to {max(files):,} entries" if files else "no state"
    minutes = run_minutes(run)
    if minutes is None:
        return f"{dataset}, not recorded"
    return f"{dataset}, {units.minutes(minutes, label=True)}"


def experiments_table(results: Path) -> str:
    """The README's experiment table: command, what it measures, the chart, the reference run's duration."""
    runs = latest_runs(find_runs(results / "reference"))
    lines = [
        "| experiment | what it measures | draws | reference run (dataset, duration) | docs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for e in EXPERIMENTS:
        run = runs.get(e.name)
        ref = f"[{duration(run)}](results/reference/{e.name}/{run.run_id})" if run else "none stored"
        lines.append(
            f"| `experiment={e.name}` | {e.measures} | {e.draws} | {ref} | [{e.doc}](docs/{e.doc}) |"
        )
    return "\n".join(lines) + "\n"


BLOCKS: dict[str, Callable[[Path], str]] = {"experiments": experiments_table}
