"""Shared pieces of the docs generators: finding a reference run, and formatting its figures."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from icelab.core.runs import Run, find_runs, latest_runs


def reference_run(results: Path, experiment: str) -> Run:
    """The newest complete run of `experiment` under `<results>/reference`.

    Raises:
        LookupError: when none is stored (a block must not be written without its result).
    """
    run = latest_runs(find_runs(results / "reference")).get(experiment)
    if run is None:
        raise LookupError(f"no complete {experiment} run under {results / 'reference'}")
    return run


def provenance(run: Run) -> str:
    """`run <id>, commit <sha7> (clean|dirty)` from the run's env.json."""
    git = run.env().get("git") or {}
    commit = (git.get("commit") or "unknown")[:7]
    state = "dirty" if git.get("dirty") else "clean"
    return f"run `{run.run_id}`, commit {commit} ({state})"


def num(value: float | None, digits: int = 0) -> str:
    """`1,354`, `0.41` (with digits), `-` for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}"


def ratio(value: float | None, digits: int = 2) -> str:
    """`2.43x`, `-` for a missing value."""
    return (
        "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}x"
    )


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as `30%`, `-` for a missing value."""
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}%}"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table, one line per row, ending in a newline."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
