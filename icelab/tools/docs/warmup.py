"""docs/protocol.md's warm-up block: how much slower each stored manifest_8mb run at `effect`
executed a case the first time it measured it than the second, per window, beside what its
warm-up rounds executed (`protocol.warmups_execute`) and how many rows its stall rules marked.

The runs are the fresh ones of the Figure 10 tutorial (`results/reference/effect`) and those
kept for the warm-up's tuning (`results/reference/stalls-tuning/cold-execution`): one of them,
CI's, had its first execution marked an outlier.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.bench.stalls import reasons
from icelab.core.runs import Run, find_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance

# Where the runs are kept, under results/reference.
SETS = ("effect", "stalls-tuning/cold-execution")
EXPERIMENT = "manifest_8mb"


def cell_ratios(m: pd.DataFrame) -> pd.DataFrame:
    """Per (query, variant, window) cell, the first measured execution's time over the second's
    (repetitions 0 and 1, as first measured, not retaken): column `ratio`."""
    rows = m[~m["warmup"].astype(bool) & m["executed"].astype(bool) & (m["retake"] == 0)]
    rows = rows[rows["repetition"].isin([0, 1]) & (rows["status"] == "ok")]
    cells = rows.pivot_table(
        index=["query_id", "variant", "window"], columns="repetition", values="execution_ms"
    ).dropna()
    return (cells[0] / cells[1]).rename("ratio").reset_index()


def first_over_second(cells: pd.DataFrame) -> pd.Series:
    """Per window, the median of a run's `cell_ratios` over its cells."""
    return cells.groupby("window")["ratio"].median()


def marked(m: pd.DataFrame) -> int:
    """Measured rows the stall rules marked (stall, gc or outlier)."""
    measured = m.loc[~m["warmup"].astype(bool), ["faults"]]
    return sum(bool(reasons(row)) for row in measured.to_dict("records"))


def runs(results: Path) -> list[Run]:
    """The complete manifest_8mb runs of the sets, oldest first."""
    found = [
        run
        for name in SETS
        for run in find_runs(results / "reference" / name)
        if run.experiment == EXPERIMENT and run.complete
    ]
    return sorted(found, key=lambda r: r.run_id)


def warmup_block(results: Path) -> str:
    """The table: per run, its warm-up's executions, first over second execution per window, its
    largest cell's (what the outlier rule would judge), and its marked rows.

    Raises:
        LookupError: when no run is stored.
    """
    found = runs(results)
    if not found:
        raise LookupError(f"no complete {EXPERIMENT} run under {', '.join(SETS)}")
    rows = []
    windows: list[str] = []
    for run in found:
        m, config = stored(run).measurements(), run.config()
        cells = cell_ratios(m)
        largest = cells.loc[cells["ratio"].idxmax()] if len(cells) else None
        windows += [w for w in config["experiment"]["windows"] if w not in windows]
        rows.append(
            {
                "provenance": provenance(run),
                "warmups_execute": config["protocol"]["warmups_execute"],
                "ratios": first_over_second(cells).to_dict(),
                "largest": None if largest is None else dict(largest),
                "marked": marked(m),
            }
        )
    return render("warmup/warmup.md.j2", rows=rows, windows=windows)


BLOCKS: dict[str, Callable[[Path], str]] = {"protocol-warmup": warmup_block}
