"""The stored stall runs of docs/reliability.md: `results/reference/stalls/<case>/<run_id>/`, one
case a directory, each a smoke run with a process stopped from outside the measurements
(`ICELAB_PAUSE_AT`), beside a clean smoke run of the same settings (`clean`, or `clean-latency`
for the case run with the delay proxy's latency).

Per run: the rows marked per reason (`icelab/bench/stalls.py`), the retakes, and per stalled row
its cell: the stalled timing, the cell's median over the rows that count (the stalled row left
out, its retake in), and the same cell's median in the clean run; and whether the two medians
agree within the session's noise (`band`, the criterion in docs/reliability.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.bench import stalls
from icelab.core.runs import Run, find_runs, latest_runs

CLEAN = "clean"
TIMINGS = ("planning_ms", "execution_ms")
CELL = ["query_id", "variant", "window"]
BAND = (2.5, 97.5)  # percentiles of the unstalled cells' ratios: the session's noise


@dataclass(frozen=True)
class StalledRow:
    """One row a stall run marked, and its cell."""

    faults: str
    query_id: str
    variant: str
    window: str
    timing: str  # the timing the stall went into: the one furthest above the cell's median
    stalled_ms: float
    median_ms: float | None  # the cell's median over the rows that count, its retake in
    clean_ms: float | None  # the same cell's median in the clean run
    clean_range_ms: tuple[float, float] | None  # its rows' smallest and largest: that session's noise
    retaken: bool
    ratio: float | None  # median_ms / clean_ms
    band: tuple[float, float] | None  # BAND of the same ratio over the cells no stall touched
    agrees: bool | None  # ratio within band: equal to the clean run's within the session's noise


@dataclass(frozen=True)
class StallRun:
    """One stall case's stored run."""

    case: str
    run: Run
    status: str
    rows: int
    marked: dict[str, int]  # rows per reason (stalls.REASONS)
    retakes: int
    stalled: list[StalledRow]


def _measured(run: Run) -> pd.DataFrame:
    rows = stored(run).measurements()
    return rows[~rows["warmup"].astype(bool)]


def _cell(rows: pd.DataFrame, key: tuple, timing: str) -> pd.Series:
    """One cell's values of `timing`."""
    return rows[(rows[CELL] == pd.Series(key, index=CELL)).all(axis=1)][timing].dropna()


def _median(rows: pd.DataFrame, key: tuple, timing: str) -> float | None:
    cell = _cell(rows, key, timing)
    return round(float(statistics.median(cell)), 1) if len(cell) else None


def _range(rows: pd.DataFrame, key: tuple, timing: str) -> tuple[float, float] | None:
    cell = _cell(rows, key, timing)
    return (round(float(cell.min()), 1), round(float(cell.max()), 1)) if len(cell) else None


def _medians(rows: pd.DataFrame, timing: str) -> pd.Series:
    """Each cell's median of `timing`, by cell."""
    return rows.dropna(subset=[timing]).groupby(CELL)[timing].median()


def band(
    kept: pd.DataFrame, clean: pd.DataFrame, timing: str, skip: set[tuple]
) -> tuple[float, float] | None:
    """The session's noise for `timing`: `BAND` of the ratio stall run / clean run of each cell's
    median, over the cells in both but those in `skip` (cells where the stall run marked a row)."""
    mine, theirs = _medians(kept, timing), _medians(clean, timing)
    both = mine.index.intersection(theirs.index)
    ratios = [mine[k] / theirs[k] for k in both if k not in skip and theirs[k] > 0]
    if len(ratios) < 2:
        return None
    low, high = np.percentile(ratios, BAND)
    return round(float(low), 3), round(float(high), 3)


def read(case: str, run: Run, clean: pd.DataFrame) -> StallRun:
    """What the stored run of stall case `case` shows, beside the clean run's counted rows."""
    rows = _measured(run)
    found = rows.to_dict("records")
    kept = counted(rows)
    touched = {tuple(r[k] for k in CELL) for r in found if stalls.reasons(r) or r.get("faulted")}
    stalled = []
    for r in found:
        if not stalls.reasons(r) or r.get("retake"):
            continue
        key = tuple(r[k] for k in CELL)
        medians = {t: _median(kept, key, t) for t in TIMINGS if r.get(t) is not None and not pd.isna(r[t])}
        timing = max(medians, key=lambda t: r[t] / medians[t] if medians[t] else 0.0)
        retaken = any(o.get("retake") and tuple(o[k] for k in CELL) == key for o in found)
        clean_ms = _median(clean, key, timing)
        ratio = medians[timing] / clean_ms if medians[timing] is not None and clean_ms else None
        noise = band(kept, clean, timing, touched)
        stalled.append(
            StalledRow(
                faults=str(r["faults"]),
                query_id=key[0],
                variant=key[1],
                window=key[2],
                timing=timing,
                stalled_ms=round(float(r[timing]), 1),
                median_ms=medians[timing],
                clean_ms=clean_ms,
                clean_range_ms=_range(clean, key, timing),
                retaken=retaken,
                ratio=round(ratio, 3) if ratio is not None else None,
                band=noise,
                agrees=noise[0] <= ratio <= noise[1] if ratio is not None and noise is not None else None,
            )
        )
    return StallRun(
        case=case,
        run=run,
        status=run.status,
        rows=len(stored(run).measurements()),
        marked=stalls.counts(found),
        retakes=sum(1 for r in found if r.get("retake")),
        stalled=stalled,
    )


def stall_runs(root: Path, cases: dict[str, str]) -> tuple[dict[str, Run], list[StallRun]]:
    """The clean runs and the newest run of each case under `root`, each case beside its clean
    case (`cases`: case -> clean case), in the order of `cases`.

    Raises:
        LookupError: a case, or a clean case, has no stored run.
    """
    newest = latest_runs(find_runs(root), include_incomplete=True)
    missing = [c for c in {*cases, *cases.values()} if c not in newest]
    if missing:
        raise LookupError(f"no stored run of stall case(s) {', '.join(sorted(missing))} under {root}")
    cleans = {c: newest[c] for c in dict.fromkeys(cases.values())}
    counted_rows = {c: counted(_measured(run)) for c, run in cleans.items()}
    return cleans, [read(case, newest[case], counted_rows[clean]) for case, clean in cases.items()]
