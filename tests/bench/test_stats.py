"""Medians, IQR and the unstable flag; warm-ups and failures never enter a median."""

from __future__ import annotations

import pandas as pd
import pytest

from icelab.bench.stats import geomeans, growth, ratios, summarize


def frame(values: dict[str, list[float]], warm: float = 1e6) -> pd.DataFrame:
    rows = []
    for window, hours in (("1d", 24.0), ("7d", 168.0)):
        for rep, v in enumerate([warm, *values[window]]):
            rows.append(
                dict(
                    query_id="q",
                    variant="parquet",
                    format="parquet",
                    profile="none",
                    window=window,
                    window_hours=hours,
                    repetition=rep - 1,
                    warmup=rep == 0,
                    status="ok",
                    planning_ms=v,
                    iceberg_planning_ms=None,
                    execution_ms=None,
                    total_ms=None,
                    manifests_total=None,
                    manifests_scanned=None,
                    files_scanned=hours,
                    files_skipped=0,
                    partitions_scanned=1,
                    bytes_scanned=1,
                    scan_nodes=1,
                )
            )
    rows.append(rows[-1] | dict(repetition=99, status="error", planning_ms=1e9))
    return pd.DataFrame(rows)


def test_medians_exclude_warmups_and_failures():
    s = summarize(frame({"1d": [10, 11, 12, 13], "7d": [20, 40, 60, 200]}), unstable_iqr=0.25).set_index(
        "window"
    )
    assert s.loc["1d", "planning_ms_median"] == pytest.approx(11.5)
    assert s.loc["1d", "planning_ms_n"] == 4
    assert s.loc["1d", "planning_ms_iqr"] == pytest.approx(1.5)
    assert not s.loc["1d", "planning_ms_unstable"]
    assert s.loc["7d", "planning_ms_unstable"]  # IQR 70 on a median of 50
    assert s.loc["7d", "errors"] == 1 and s.loc["1d", "errors"] == 0


def test_growth_is_wide_over_narrow():
    s = summarize(frame({"1d": [10, 10, 10], "7d": [30, 30, 30]}), unstable_iqr=0.25)
    g = growth(s, "7d", "1d").iloc[0]
    assert g.planning_ratio == pytest.approx(3.0)
    assert g.files_scanned_7d == 168 and g.files_scanned_1d == 24


def test_a_run_without_parquet_has_no_parquet_metric_columns():
    rows = frame({"1d": [1.0, 2.0, 3.0], "7d": [4.0, 5.0, 6.0]}).drop(columns=["partitions_scanned"])
    summary = summarize(rows, 0.25)
    assert summary["partitions_scanned"].isna().all()
    assert summary["planning_ms_median"].tolist() == [2.0, 5.0]


def test_ratios_and_geomeans_against_a_reference():
    summary = pd.DataFrame(
        {
            "query_id": ["a", "a", "b", "b"],
            "variant": ["ref", "x", "ref", "x"],
            "planning_ms_median": [10.0, 20.0, 10.0, 40.0],
            "execution_ms_median": [90.0, 80.0, 90.0, 60.0],
            "total_ms_median": [None] * 4,  # ratios use planning + execution medians
        }
    )
    per_query = ratios(summary, "ref")
    x = per_query[per_query["variant"] == "x"].set_index("query_id")
    assert x.loc["a", "planning_ms_ratio"] == 2.0 and x.loc["b", "total_ms_ratio"] == 1.0
    means = geomeans(per_query, summary).set_index("variant")
    assert means.loc["x", "planning_ms_geomean"] == pytest.approx(8**0.5)
    assert means.loc["x", "worst_query"] == "a"  # total 100/100 = 1.0 for both; first maximum
    assert means.loc["x", "planning_share"] == pytest.approx(60 / 200)
