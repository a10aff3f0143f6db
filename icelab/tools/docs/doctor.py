"""The generated blocks of docs/doctor.md: the doctor against `manifest_health` at medium, and
the time to a report per table size.

Figures come from the `doctor` reference runs (report.json, run.json, env.json) and the newest
`manifest_health` reference run (report.json); a doctor run is matched to a `manifest_health`
table state by the table's directory (the doctor reads by path through a catalog of its own).
Sizes are decimal (an MB is 1,000,000 bytes).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

from icelab.core.runs import Run, find_runs
from icelab.core.units import num, size
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def doctor_runs(results: Path) -> list[Run]:
    """Every complete doctor reference run, oldest first.

    Raises:
        LookupError: when there is none.
    """
    runs = [r for r in find_runs(results / "reference") if r.experiment == "doctor" and r.complete]
    if not runs:
        raise LookupError(f"no complete doctor run under {results / 'reference'}")
    return sorted(runs, key=lambda r: r.run_id)


def _report(run: Run) -> dict:
    return json.loads((run.path / "report.json").read_text())


def _equal(mine: dict, theirs: dict) -> tuple[int, int]:
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


def _directory(report: dict) -> str:
    """The directory of the table a doctor run read: its metadata file's, one level up (a
    registered copy keeps the original's `location`, so that cannot tell them apart)."""
    return str(PurePosixPath(urlparse(report["table"]["metadata_file"]).path).parent.parent)


def against_health(results: Path) -> str:
    """Per table state of the manifest_health reference run: what the doctor run on it found."""
    health = reference_run(results, "manifest_health")
    uri = health.env().get("dataset", {}).get("uri", "").rstrip("/")
    states = {_location(uri, s["table"]): s for s in json.loads((health.path / "report.json").read_text())}
    rows = []
    for run in doctor_runs(results):
        report = _report(run)
        theirs = states.get(_directory(report))
        if theirs is None:
            continue
        mine = report["states"][0]
        same, total = _equal(mine["stats"], theirs["stats"])
        rows.append(
            [
                f"`{theirs['state']}`",
                f"{theirs['manifests']} / {mine['manifests']}",
                f"{num(theirs['manifest_bytes'])} / {num(mine['manifest_bytes'])}",
                # The doctor's rules against manifest_health's (its own verdict also weighs the
                # rewrite: `verdict`, and the exit code).
                f"{theirs['verdict']} / {mine.get('rule_verdict', mine['verdict'])}",
                "same" if theirs["reasons"] == mine["reasons"] else "differ",
                f"{same} of {total}",
                report["exit_code"],
                f"`{run.run_id}`",
            ]
        )
    if not rows:
        raise LookupError(f"no doctor reference run read a table of manifest_health run {health.run_id}")
    dataset = health.env().get("dataset", {})
    return render(
        "doctor/vs_health.md.j2",
        rows=rows,
        provenance=provenance(health),
        dataset={k: dataset.get(k) for k in ("name", "hash")},
    )


def readers(results: Path) -> str:
    """Time to a report per doctor reference run, smallest table first."""
    runs = doctor_runs(results)
    rows = []
    for run in runs:
        report = _report(run)
        reader, state = report["reader"], report["states"][0]
        steps = reader["steps"]
        rows.append(
            (
                reader["entries"],
                [
                    f"`{report['table']['given']}`",
                    num(reader["entries"]),
                    num(reader["manifests"]),
                    size(state["manifest_bytes"]),
                    reader["name"],
                    num(reader["load_seconds"], 1),
                    num(steps.get("entries"), 1),
                    num(reader["read_seconds"], 1),
                    num(reader.get("process_seconds"), 1),
                    f"`{run.run_id}`",
                ],
            )
        )
    machine = runs[-1].env().get("machine", {})
    return render(
        "doctor/readers.md.j2",
        rows=[row for _, row in sorted(rows, key=lambda r: r[0])],
        machine=machine and {k: machine.get(k) for k in ("cpu", "cores", "memory_gib")},
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "doctor-vs-health": against_health,
    "doctor-readers": readers,
}
