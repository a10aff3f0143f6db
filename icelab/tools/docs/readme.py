"""The README's generated blocks: the experiment table with the reference runs' durations."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from icelab.core import units
from icelab.core.runs import Run, find_runs, latest_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import run_minutes


def duration(run: Run) -> str:
    """`<dataset>, <minutes> min` from run.json: from its process's start (else the run
    directory's opening) to its finish; what is missing, said. A doctor run names its table's size."""
    dataset = (run.config().get("dataset") or {}).get("name", "?")
    if run.experiment == "doctor":
        entries = json.loads((run.path / "report.json").read_text())["reader"]["entries"]
        dataset = f"{entries:,} entries"
    if run.experiment == "doctor_catalogue":
        dataset = f"{len(json.loads((run.path / 'catalogue.json').read_text())['shapes'])} table shapes"
    if run.experiment == "metadata_scale":
        files = state_files(run)
        dataset = f"{min(files):,} to {max(files):,} entries" if files else "no state"
    minutes = run_minutes(run)
    if minutes is None:
        return f"{dataset}, not recorded"
    return f"{dataset}, {units.minutes(minutes, label=True)}"


def state_files(run: Run) -> list[int]:
    """The data files of each table state a metadata_scale run measured (run.json `states`)."""
    return [state["data_files"] for state in run.meta().get("states", {}).values()]


def experiments_table(results: Path) -> str:
    """The README's experiment table: command, what it measures, the chart, the reference run's duration."""
    runs = latest_runs(find_runs(results / "reference"))
    stored = {name: {"duration": duration(run), "id": run.run_id} for name, run in runs.items()}
    files = state_files(runs["metadata_scale"]) if "metadata_scale" in runs else []
    return render(
        "readme/experiments.md.j2",
        runs=stored,
        meta_files=files and f"{units.short_count(min(files))} to {units.short_count(max(files))}",
    )


BLOCKS: dict[str, Callable[[Path], str]] = {"experiments": experiments_table}
