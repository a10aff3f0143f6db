"""The figures of stored `doctor` runs (report.json): what a run found on a table state of a
`manifest_health` run, and how long each took to its report.

A doctor run is matched to a `manifest_health` table state by the table's directory (the doctor
reads by path through a catalog of its own).
"""

from __future__ import annotations

import json
import math
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlparse

from icelab.core.runs import Run


def report(run: Run) -> dict:
    """The run's report.json."""
    return json.loads((run.path / "report.json").read_text())


def equal(mine: dict, theirs: dict) -> tuple[int, int]:
    """How many of `theirs` statistics `mine` gives alike (to 12 significant digits), of how many."""
    same = total = 0
    for key, stats in theirs.items():
        for name, value in stats.items():
            total += 1
            other = mine.get(key, {}).get(name)
            same += other is not None and math.isclose(other, value, rel_tol=1e-12, abs_tol=1e-12)
    return same, total


def _location(dataset_uri: str, table: str) -> str:
    """The directory of a dataset's table: `<dataset>/iceberg/<namespace>/<table>`."""
    return urlparse(f"{dataset_uri}/iceberg/" + "/".join(table.split(".")[1:])).path


def _directory(found: dict) -> str:
    """The directory of the table a doctor run read: its metadata file's, one level up (a
    registered copy keeps the original's `location`, so that cannot tell them apart)."""
    return str(PurePosixPath(urlparse(found["table"]["metadata_file"]).path).parent.parent)


def against_health(health: Run, runs: list[Run]) -> list[dict[str, Any]]:
    """Per doctor run that read a table state of the `manifest_health` run `health`: that state's
    report (`theirs`), the doctor's (`mine`), how many statistics they give alike, and the run."""
    uri = health.env().get("dataset", {}).get("uri", "").rstrip("/")
    states = {_location(uri, s["table"]): s for s in report(health)}
    rows = []
    for run in runs:
        found = report(run)
        theirs = states.get(_directory(found))
        if theirs is not None:
            mine = found["states"][0]
            same, total = equal(mine["stats"], theirs["stats"])
            rows.append(
                {"theirs": theirs, "mine": mine, "same": same, "total": total, "report": found, "run": run}
            )
    return rows


def reader_times(runs: list[Run]) -> list[dict[str, Any]]:
    """Per doctor run, smallest table first: its report (what it read and the seconds of each
    step, in `reader`) and the run."""
    found = [{"report": report(run), "run": run} for run in runs]
    return sorted(found, key=lambda r: r["report"]["reader"]["entries"])
