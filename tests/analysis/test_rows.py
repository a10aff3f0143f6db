"""The rows that count: measured rounds that succeeded, whatever dtype the warm-up flag was read as."""

from __future__ import annotations

import pandas as pd

from icelab.analysis.rows import counted


def test_warm_ups_and_failures_do_not_count():
    frame = pd.DataFrame(
        {
            "warmup": [True, False, False, False],
            "status": ["ok", "ok", "error", "ok"],
            "planning_ms": [1.0, 2.0, 3.0, 4.0],
        }
    )
    assert counted(frame)["planning_ms"].tolist() == [2.0, 4.0]
    # Read back from a file with a null beside the flags, the column is object-typed.
    assert counted(frame.astype({"warmup": object}))["planning_ms"].tolist() == [2.0, 4.0]


def test_a_faulted_measurement_counts_only_when_kept():
    frame = pd.DataFrame(
        {
            "warmup": [False, False, False, True],
            "status": ["ok", "ok", "ok", "ok"],
            "faulted": [False, True, None, True],  # None: a row no store watched
            "planning_ms": [1.0, 2.0, 3.0, 4.0],
        }
    )
    assert counted(frame)["planning_ms"].tolist() == [1.0, 3.0]
    assert counted(frame, keep_faulted=True)["planning_ms"].tolist() == [1.0, 2.0, 3.0]
    # Runs written before the column count every ok, measured row.
    assert counted(frame.drop(columns="faulted"))["planning_ms"].tolist() == [1.0, 2.0, 3.0]
