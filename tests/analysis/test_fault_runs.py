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
