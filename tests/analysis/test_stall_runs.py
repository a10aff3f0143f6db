"""The stored stall runs of docs/reliability.md, read back (icelab/analysis/stall_runs.py): each
external stall left exactly one row marked, measured again, and the clean runs none."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from icelab.analysis import stall_runs
from icelab.tools.docs.reliability_page import STALL_CASES, STALL_LOOKS

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"


# The reason each case's stall is marked for: a stopped process is a stall, a storm of
# collections a gc (a 5 s storm on the executor spans several short measurements).
REASON = {"jvm-gc-storm": "gc", "executor-gc-storm": "gc"}


@pytest.mark.parametrize("look", STALL_LOOKS)
def test_each_stall_is_marked_for_its_reason_measured_again_and_the_clean_runs_mark_none(look: str):
    cleans, found = stall_runs.stall_runs(REFERENCE / look, STALL_CASES)
    assert {run.case for run in found} == set(STALL_CASES)
    for run in found:
        reason = REASON.get(run.case, "stall")
        assert run.marked[reason] >= 1 and sum(run.marked.values()) == run.marked[reason], run.case
        assert len(run.stalled) == run.marked[reason] == run.retakes, run.case
        for row in run.stalled:
            assert row.retaken, run.case
            # The stall is in the marked row's timing, not in the cell's median.
            assert row.stalled_ms > 5 * row.median_ms, run.case
    for case, clean in cleans.items():
        (read,) = [stall_runs.read(case, clean, stall_runs.counted(stall_runs._measured(clean)))]
        assert read.marked == {"stall": 0, "gc": 0, "outlier": 0} and read.retakes == 0, case


def _cells(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"query_id": q, "variant": "parquet", "window": "1d", "planning_ms": v} for q, v in values.items()]
    )


def test_the_band_is_the_spread_of_the_untouched_cells_ratios_and_leaves_out_the_stalled_cell():
    clean = _cells({f"q{i}": 100.0 for i in range(41)} | {"stalled": 100.0})
    # 41 untouched cells whose ratios run from 0.8 to 1.2, and the stalled cell's far outside.
    kept = _cells({f"q{i}": 80.0 + i for i in range(41)} | {"stalled": 500.0})
    low, high = stall_runs.band(kept, clean, "planning_ms", skip={("stalled", "parquet", "1d")})
    assert (low, high) == (0.81, 1.19)
    # Counted among the others, the stalled cell would widen the band it is judged against.
    assert stall_runs.band(kept, clean, "planning_ms", skip=set())[1] > 1.19
