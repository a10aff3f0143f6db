"""Medians, IQR and the unstable flag; warm-ups and failures never enter a median."""

from __future__ import annotations

import pandas as pd
import pytest

from icelab.analysis.stats import geomeans, growth, ratios, summarize


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
    # The 7d group holds the error row (1e9 ms): it is counted as an error, never as a value.
    assert s.loc["7d", "planning_ms_n"] == 4
    assert s.loc["7d", "planning_ms_median"] == pytest.approx(50.0)
    assert s.loc["7d", "planning_ms_q3"] == pytest.approx(95.0)


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


def _noisy(rng, variant: str, planning: float, execution: float, reps: int) -> list[dict]:
    return [
        dict(
            query_id=f"q{q:02d}",
            window="1d",
            variant=variant,
            repetition=r,
            warmup=False,
            status="ok",
            planning_ms=planning * (1 + q / 10) * rng.lognormal(0, 0.05),
            execution_ms=execution * (1 + q / 10) * rng.lognormal(0, 0.05),
        )
        for q in range(8)
        for r in range(reps)
    ]


def test_geometric_means_get_an_interval_around_the_ratio_of_summed_medians():
    """Iceberg plans 3x Parquet's 100 ms and executes as fast (900 ms): planning 3, execution 1,
    total (300 + 900) / (100 + 900) = 1.2, each interval narrow and around its value; warm-ups and failures
    left out; below 5 values per cell, the estimate without an interval."""
    import numpy as np

    from icelab.analysis.stats import geomean_intervals

    rng = np.random.default_rng(4)
    rows = _noisy(rng, "parquet", 100, 900, 8) + _noisy(rng, "iceberg/initial", 300, 900, 8)
    rows += [dict(rows[0], warmup=True, planning_ms=1e6), dict(rows[1], status="failed", execution_ms=1e6)]
    got = geomean_intervals(pd.DataFrame(rows), "parquet").set_index("variant").loc["iceberg/initial"]
    for part, expected in (("planning_ms", 3.0), ("execution_ms", 1.0), ("total_ms", 1.2)):
        # The interval covers the value, give or take the 5% noise's chance of missing it by a hair.
        assert got[f"{part}_ci_low"] <= 1.02 * expected and got[f"{part}_ci_high"] >= 0.98 * expected, part
        assert got[f"{part}_geomean"] == pytest.approx(expected, rel=0.05), part
        assert got[f"{part}_ci_high"] - got[f"{part}_ci_low"] < 0.1 * expected, part
    few = _noisy(rng, "parquet", 100, 900, 4) + _noisy(rng, "iceberg/initial", 300, 900, 4)
    got = geomean_intervals(pd.DataFrame(few), "parquet").iloc[0]
    assert got["total_ms_geomean"] == pytest.approx(1.2, rel=0.05) and np.isnan(got["total_ms_ci_low"])


def test_a_cell_whose_rows_all_met_a_fault_stays_with_no_median():
    rows = frame({"1d": [10, 11, 12], "7d": [20, 30, 40]}).assign(faulted=False)
    rows.loc[(rows["window"] == "7d") & ~rows["warmup"], "faulted"] = True
    rows.loc[rows.index[1], "faulted"] = True  # one 1d row too
    s = summarize(rows, unstable_iqr=0.25).set_index("window")
    assert s.loc["1d", "planning_ms_n"] == 2 and s.loc["1d", "planning_ms_median"] == pytest.approx(11.5)
    assert s.loc["1d", "faulted"] == 1
    assert s.loc["7d", "planning_ms_n"] == 0 and pd.isna(s.loc["7d", "planning_ms_median"])
    assert s.loc["7d", "faulted"] == 3 and s.loc["7d", "errors"] == 1
    kept = summarize(rows, unstable_iqr=0.25, keep_faulted=True).set_index("window")
    assert kept.loc["7d", "planning_ms_n"] == 3 and kept.loc["7d", "faulted"] == 0
