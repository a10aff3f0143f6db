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
    after_rounds_s: float | None = None  # nothing marked, interrupted: from the last row to the end
    outages: tuple[str, ...] = ()  # run.json's store_events, one phrase each (`outage_phrase`)
    pairs_marked: int = 0  # overhead pairs measured across a store outage (overhead.csv `faulted`)


def outage_phrase(event: dict) -> str:
    """`overhead pairs: radosgw restarted, back after 7.1 s` for one of run.json's store_events."""
    how = "radosgw restarted, " if event.get("restarted") else ""
    ended = "back" if event.get("outcome") == "back" else "not back"
    return f"{event['phase']}: {how}{ended} after {event['seconds']:g} s"


def _pairs_marked(run: Run) -> int:
    overhead = stored(run).table("overhead.csv")
    if overhead is None or "faulted" not in overhead:  # no pairs, or stored before the column
        return 0
    return int(overhead["faulted"].astype("boolean").fillna(False).sum())


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


def after_rounds_seconds(measurements: pd.DataFrame, finished_utc: str | None) -> float | None:
    """From the last row to the run's end: how long a run whose store was lost after the rounds
    (nothing marked) took to know it and end (None: no rows or no end)."""
    if measurements.empty or not finished_utc:
        return None
    last = max(_utc(t) for t in measurements["measured_utc"])
    return round((_utc(finished_utc) - last).total_seconds(), 1)


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
        after_rounds_s=(
            after_rounds_seconds(rows, meta.get("finished_utc"))
            if not len(marked) and run.status == "interrupted"
            else None
        ),
        outages=tuple(outage_phrase(e) for e in meta.get("store_events") or []),
        pairs_marked=_pairs_marked(run),
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


@dataclass(frozen=True)
class Beside:
    """Two runs of one benchmark, cell by cell, the marked rows left out (the rule of the rows
    that count): how many cells each verdict of `comparison.compare` got, and how far apart the
    medians lie."""

    cells: int  # cells of the timing with rows on either side
    compared: int  # cells with a median on both sides
    verdicts: dict[str, int]
    median_change: float | None  # median over the compared cells of |b / a - 1|
    largest_change: float | None
    emptied_variants: tuple[str, ...] = ()  # variants of the cells with no row left on one side

    @property
    def differ(self) -> int:
        """Cells the test calls changed (p < 0.05 after the correction and at least 10% apart)."""
        return self.verdicts.get(comparison.REGRESSION, 0) + self.verdicts.get(comparison.IMPROVEMENT, 0)

    @property
    def emptied(self) -> int:
        """Cells with no row left on one side."""
        return self.verdicts.get(comparison.MISSING, 0)

    @property
    def too_few(self) -> int:
        """Cells with rows on both sides, too few for the test to reach p < 0.05."""
        return self.verdicts.get(comparison.TOO_FEW, 0)

    @property
    def tested(self) -> int:
        """Cells the test could call changed."""
        return self.cells - self.emptied - self.too_few


def beside(a: pd.DataFrame, b: pd.DataFrame, timing: str = "planning_ms") -> Beside:
    """Run b's measurements against run a's, cell by cell, on `timing`."""
    cells = comparison.compare(a, b)
    cells = cells[cells["timing"] == timing]
    change = cells["change"].abs().dropna()
    return Beside(
        cells=len(cells),
        compared=len(change),
        verdicts={str(k): int(v) for k, v in cells["verdict"].value_counts().sort_index().items()},
        median_change=float(change.median()) if len(change) else None,
        largest_change=float(change.max()) if len(change) else None,
        emptied_variants=tuple(dict.fromkeys(cells.loc[cells["verdict"] == comparison.MISSING, "variant"])),
    )


@dataclass(frozen=True)
class NoiseCheck:
    """A faulted run beside two clean runs of the same benchmark: do the medians left after the
    marked rows differ from a clean run's more than the clean runs differ from each other?"""

    clean: tuple[Run, Run]
    faulted: FaultRun
    noise: Beside  # clean run 1 against clean run 2
    against: tuple[Beside, Beside]  # clean run 1, then clean run 2, against the faulted run

    @property
    def agree(self) -> bool:
        """No more cells called changed against either clean run than between the clean runs (of
        the cells the test could call changed: `Beside.tested`)."""
        return max(b.differ for b in self.against) <= self.noise.differ


def noise_check(root: Path, clean_case: str, faulted_case: str, timing: str = "planning_ms") -> NoiseCheck:
    """The two newest complete runs of `clean_case` and the newest run of `faulted_case` under
    `root` (a directory per case), compared cell by cell (`beside`).

    Raises:
        LookupError: fewer than two clean runs or no faulted run is stored.
    """
    runs = [r for r in find_runs(root) if r.complete]
    clean = [r for r in runs if r.experiment == clean_case][-2:]
    faulted = [r for r in runs if r.experiment == faulted_case]
    if len(clean) < 2 or not faulted:
        raise LookupError(
            f"need two complete runs under {root / clean_case} and one under {root / faulted_case}"
        )
    rows = [stored(r).measurements() for r in (*clean, faulted[-1])]
    return NoiseCheck(
        clean=(clean[0], clean[1]),
        faulted=read(faulted_case, faulted[-1]),
        noise=beside(rows[0], rows[1], timing),
        against=(beside(rows[0], rows[2], timing), beside(rows[1], rows[2], timing)),
    )
