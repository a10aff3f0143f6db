"""The stored stall runs of docs/reliability.md, read back (icelab/analysis/stall_runs.py): each
external stall left exactly one row marked, measured again, and the clean runs none."""

from __future__ import annotations

from pathlib import Path

from icelab.analysis import stall_runs
from icelab.tools.docs.reliability_page import STALL_CASES

ROOT = Path(__file__).resolve().parents[2] / "results" / "reference" / "stalls"


def test_each_stall_is_one_marked_row_measured_again_and_the_clean_runs_mark_none():
    cleans, found = stall_runs.stall_runs(ROOT, STALL_CASES)
    for run in found:
        assert run.marked == {"stall": 1, "gc": 0, "outlier": 0}, run.case
        (row,) = run.stalled
        assert row.retaken and run.retakes == 1, run.case
        # The stall is in the marked row's timing, not in the cell's median.
        assert row.stalled_ms > 10 * row.median_ms, run.case
    for case, clean in cleans.items():
        (read,) = [stall_runs.read(case, clean, stall_runs.counted(stall_runs._measured(clean)))]
        assert read.marked == {"stall": 0, "gc": 0, "outlier": 0} and read.retakes == 0, case
