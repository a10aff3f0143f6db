"""The stored fault runs of docs/reliability.md, one case a directory:
`results/reference/faults/<case>/<run_id>/`, each the newest run of its case, finished or not.

Per run: how it ended, the rows it kept and how many of them were marked `faulted` (by fault),
whether its answers agreed, and how long the measurement that met the fault ran before the run
knew: from the row recorded before it (or the run's start) to its own row, the longest such wall
time of a marked row.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import comparison
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run, find_runs, latest_runs


@dataclass(frozen=True)
class FaultRun:
    """One fault case's stored run, as the reliability table shows it."""

    case: str
    run: Run
    status: str
    ended: str | None  # the one line an interrupted run ended with, or a failed run's error
    rows: int
    marked: int
    faults: dict[str, int]  # marked rows per fault named in the `faults` column
    answers: bool | None  # run.json's answers_agree (None: not checked, e.g. interrupted first)
    detect_s: float | None  # the longest wall time of a marked measurement (None: none marked)


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def detect_seconds(measurements: pd.DataFrame, started_utc: str | None) -> float | None:
    """The longest time from the row before a marked row (or the run's start) to the marked row."""
    if measurements.empty or "faulted" not in measurements.columns:
        return None
    rows = measurements.assign(at=measurements["measured_utc"].map(_utc)).sort_values("at")
    before = rows["at"].shift(1)
    if started_utc:
        before = before.fillna(_utc(started_utc))
    marked = rows["faulted"].astype("boolean").fillna(False).astype(bool)
    waits = (rows["at"] - before)[marked].dropna()
    return float(waits.max().total_seconds()) if len(waits) else None


def _first_line(error: str | None) -> str | None:
    """A failed run's error as one line (run.json keeps its repr, Java's message first)."""
    return error.replace("\\n", "\n").splitlines()[0].strip() if error else None


def _faults(marked: pd.DataFrame) -> dict[str, int]:
    # `faults` reads `slowdown=1,stall=2` (the proxy's tally) or `outage`.
    named = marked["faults"].fillna("").str.split(",").explode().str.split("=").str[0].str.strip()
    return {k: int(v) for k, v in named[named != ""].value_counts().sort_index().items()}


def read(case: str, run: Run) -> FaultRun:
    """What the stored run of fault case `case` shows."""
    meta = run.meta()
    rows = stored(run).measurements() if stored(run).has_measurements() else pd.DataFrame()
    marked = rows[rows["faulted"].astype("boolean").fillna(False).astype(bool)] if len(rows) else rows
    return FaultRun(
        case=case,
        run=run,
        status=run.status,
        ended=meta.get("ended") or _first_line(meta.get("error")),
        rows=len(rows),
        marked=len(marked),
        faults=_faults(marked) if len(marked) else {},
        answers=meta.get("answers_agree"),
        detect_s=detect_seconds(rows, meta.get("started_utc")),
    )


def fault_runs(root: Path, cases: tuple[str, ...]) -> list[FaultRun]:
    """The newest run of each case under `root` (a directory per case), in the order of `cases`.

    Raises:
        LookupError: a case has no stored run (a row must not be written without its result).
    """
    newest = latest_runs(find_runs(root), include_incomplete=True)
    missing = [c for c in cases if c not in newest]
    if missing:
        raise LookupError(f"no stored run of fault case(s) {', '.join(missing)} under {root}")
    return [read(case, newest[case]) for case in cases]


def beside_clean(clean: Run, faulted: Run, timing: str = "planning_ms") -> dict[str, object]:
    """The faulted run's cells against the clean run's, the marked rows left out (the rule of the
    rows that count): cells per verdict of `comparison.compare`, and the largest change."""
    cells = comparison.compare(stored(clean).measurements(), stored(faulted).measurements())
    cells = cells[cells["timing"] == timing]
    return {
        "cells": len(cells),
        "verdicts": {str(k): int(v) for k, v in cells["verdict"].value_counts().sort_index().items()},
        "largest_change": float(cells["change"].abs().max()) if len(cells) else None,
    }
