"""docs/history.md's warm-up block: per warm-up kind (`protocol.warmups_execute`) of the stored
manifest_8mb runs at `effect`, how much slower a case's first measured execution ran than its
second, per window, and the rows the stall rules marked. The runs: `results/reference/effect` and
`results/reference/stalls-tuning/cold-execution`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.bench.stalls import reasons
from icelab.core.runs import find_runs
from icelab.tools.docs.markdown import render, warmup_kind

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


def marked(m: pd.DataFrame) -> int:
    """Measured rows the stall rules marked (stall, gc or outlier)."""
    measured = m.loc[~m["warmup"].astype(bool), ["faults"]]
    return sum(bool(reasons(row)) for row in measured.to_dict("records"))


def warmup_block(results: Path) -> str:
    """Per warm-up kind: its runs, the median over them of each run's median ratio per window,
    the largest cell's ratio, and the marked rows with the runs that marked them.

    Raises:
        LookupError: when no run is stored.
    """
    found = [r for s in SETS for r in find_runs(results / "reference" / s) if r.experiment == EXPERIMENT]
    found = sorted((r for r in found if r.complete), key=lambda r: r.run_id)
    if not found:
        raise LookupError(f"no complete {EXPERIMENT} run under {', '.join(SETS)}")
    cells, flagged = [], {}
    for run in found:
        m, kind = stored(run).measurements(), warmup_kind(run.config()["protocol"]["warmups_execute"])
        cells.append(cell_ratios(m).assign(run=run.run_id, kind=kind))
        flagged[run.run_id] = marked(m)
    rows = []
    for kind, c in pd.concat(cells, ignore_index=True).groupby("kind", sort=False):
        per_run = c.groupby(["run", "window"])["ratio"].median().groupby("window").median()
        runs = c["run"].unique()
        marks = {r: flagged[r] for r in runs if flagged[r]}
        largest = dict(c.loc[c["ratio"].idxmax()])
        rows.append({"kind": kind, "runs": len(runs), "ratios": per_run, "largest": largest, "marked": marks})
    windows = list(dict.fromkeys(w for run in found for w in run.config()["experiment"]["windows"]))
    return render("warmup/warmup.md.j2", rows=rows, windows=windows, sets=SETS)


BLOCKS: dict[str, Callable[[Path], str]] = {"protocol-warmup": warmup_block}
