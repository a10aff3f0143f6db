"""The planning experiment's console tables when a cell has no row that counts (its only
measurement failed, as one that met a store outage in a one-round run does)."""

from __future__ import annotations

import pandas as pd

from icelab.experiments.planning import report


def test_a_cell_without_rows_that_count_is_a_dash_not_a_crash():
    # iceberg/as_ingested has no 1d row: its one measurement there was an error row.
    summary = pd.DataFrame(
        {
            "query_id": ["q"] * 3,
            "variant": ["parquet", "parquet", "iceberg/as_ingested"],
            "format": ["parquet", "parquet", "iceberg"],
            "window": ["1h", "1d", "1h"],
            "window_hours": [1.0, 24.0, 1.0],
            "planning_ms_median": [10.0, 12.0, 20.0],
            "planning_ms_unstable": [False, False, False],
            "manifests_scanned": [None, None, 1.0],
            "manifests_total": [None, None, 3.0],
        }
    )
    growth = pd.DataFrame(
        {"query_id": ["q"], "variant": ["parquet"], "planning_ratio": [1.2], "iceberg_planning_ratio": [None]}
    )
    lines = report(summary, growth, pd.DataFrame(), ("1d", "1h")).splitlines()
    ice = [line.split() for line in lines if line.startswith("iceberg/as_ingested")]
    assert ice == [["iceberg/as_ingested", "20", "-"], ["iceberg/as_ingested", "1/3", "-"]]
