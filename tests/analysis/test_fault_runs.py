"""The fault table's figures: which rows are marked, by which fault, and how long the measurement
that met a fault ran before its row was recorded."""

from __future__ import annotations

import pandas as pd
import pytest

from icelab.analysis import fault_runs

START = "2026-11-28T02:00:00Z"


def rows(*spec: tuple[str, bool, str | None]) -> pd.DataFrame:
    return pd.DataFrame(spec, columns=["measured_utc", "faulted", "faults"])


def test_the_wait_of_a_marked_row_is_counted_from_the_row_before_it():
    frame = rows(
        ("2026-11-28T02:00:10Z", False, None),
        ("2026-11-28T02:00:12Z", False, None),
        ("2026-11-28T02:01:42Z", True, "outage"),  # 90 s after the row before it
        ("2026-11-28T02:01:45Z", True, "slowdown=1"),  # 3 s
    )
    assert fault_runs.detect_seconds(frame, START) == 90.0


def test_rows_are_ordered_by_time_not_by_position():
    frame = rows(("2026-11-28T02:00:30Z", True, "stall=1"), ("2026-11-28T02:00:20Z", False, None))
    assert fault_runs.detect_seconds(frame, START) == 10.0


def test_a_first_row_marked_counts_from_the_run_start():
    assert fault_runs.detect_seconds(rows(("2026-11-28T02:00:05Z", True, "reset=2")), START) == 5.0


def test_nothing_marked_has_no_time_to_detect():
    assert fault_runs.detect_seconds(rows(("2026-11-28T02:00:05Z", False, None)), START) is None


def test_marked_rows_are_counted_per_fault_named():
    marked = rows(
        ("t", True, "slowdown=2,stall=1"), ("t", True, "slowdown=1"), ("t", True, "outage"), ("t", True, None)
    )
    assert fault_runs._faults(marked) == {"outage": 1, "slowdown": 2, "stall": 1}


def test_a_case_without_a_stored_run_is_an_error(tmp_path):
    with pytest.raises(LookupError, match="store-slowdown"):
        fault_runs.fault_runs(tmp_path, ("store-slowdown",))


def test_a_failed_run_is_told_by_the_first_line_of_its_error():
    error = "Py4JJavaError('An error occurred while calling z:x.load.\\n', JavaObject id=o147)"
    assert fault_runs._first_line(error) == "Py4JJavaError('An error occurred while calling z:x.load."
    assert fault_runs._first_line(None) is None


def runs_of(cells: dict[str, list[float]], marked: int = 0) -> pd.DataFrame:
    """Measured rows of one run: per cell (a query id) its planning times; the first `marked`
    rows of each cell met a fault."""
    return pd.DataFrame(
        [
            {
                "query_id": cell,
                "variant": "iceberg",
                "window": "1d",
                "warmup": False,
                "status": "ok",
                "faulted": i < marked,
                "repetition": i,
                "planning_ms": ms,
                "execution_ms": None,
                "total_ms": ms,
            }
            for cell, times in cells.items()
            for i, ms in enumerate(times)
        ]
    )


def test_beside_leaves_marked_rows_out_and_measures_how_far_the_medians_lie():
    clean = runs_of({"q1": [100.0] * 8, "q2": [50.0] * 8, "q3": [10.0] * 8})
    # q1's first two rows met a fault (their timing holds a retry's back-off): left out, the rest
    # agree; q2 is 30% slower in every row; q3 lost every row to faults.
    faulted = runs_of({"q1": [900.0, 900.0] + [101.0] * 6, "q2": [65.0] * 8, "q3": [500.0] * 8}, marked=2)
    faulted.loc[faulted["query_id"] == "q3", "faulted"] = True
    got = fault_runs.beside(clean, faulted)
    assert (got.cells, got.compared) == (3, 2)
    assert got.verdicts == {"missing": 1, "no change": 1, "regression": 1}
    assert (got.differ, got.emptied, got.too_few, got.tested) == (1, 1, 0, 2)
    assert got.emptied_variants == ("iceberg",)
    assert got.largest_change == pytest.approx(0.30)
    assert got.median_change == pytest.approx((0.01 + 0.30) / 2)
