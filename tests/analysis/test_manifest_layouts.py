"""A table described by its size: the layout arithmetic exact, each layout and window predicted,
and the least summed prediction recommended (icelab.analysis.manifest_layouts; no Spark)."""

from __future__ import annotations

import pandas as pd
import pytest

from icelab.analysis.manifest_layouts import (
    ingested_layout,
    predict_table,
    recommend,
    rewrite_layout,
    window_days,
)
from icelab.analysis.planning_model import fit
from icelab.tools.costmodel_output import recommendation_line
from tests.analysis.test_planning_model import THREADS, planted, synthetic


@pytest.fixture(scope="module")
def run_data() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return synthetic()


def test_the_layout_arithmetic_by_hand():
    # 1.8M files over 180 days: 10,000 per day; 8 MB / 700 B = 11,983 entries a manifest (> a day).
    lay = rewrite_layout(1_800_000, 180, 700, "8MB")
    assert (lay.entries_per_manifest, lay.files_per_day, lay.manifests) == (11_983, 10_000, 151)
    assert lay.read(1) == (2, 23_966)
    assert lay.read(30) == (27, 27 * 11_983)  # ceil(300,000 / 11,983) = 26, plus the boundary
    assert lay.read(180) == (151, 1_800_000)
    assert lay.read(179) == (151, 1_800_000)  # ceil(149.4) + 1 = 151: all of them
    # 1 MB: 1,497 entries, less than a day: a day spans ceil(6.68) + 1 = 8 manifests.
    small = rewrite_layout(1_800_000, 180, 700, 2**20)
    assert (small.entries_per_manifest, small.manifests) == (1_497, 1_203)
    assert small.read(1) == (8, 8 * 1_497)
    assert small.read(30) == (202, 202 * 1_497)
    assert small.manifests_per_day == pytest.approx(10_000 / 1_497)
    ingested = ingested_layout(1_800_000, 180, 379)
    assert ingested.read(1) == ingested.read(180) == (379, 1_800_000)
    assert ingested.manifests_per_day == 379


def test_window_days():
    names = ("1h", "23h", "25h", "36h", "1d", "30d", "365d", "full")
    assert [window_days(w, 180) for w in names] == [1, 1, 2, 2, 1, 30, 180, 180]
    with pytest.raises(ValueError, match="bad window '3x'"):
        window_days("3x", 180)


def test_predict_table_reads_and_predicts_per_layout(run_data):
    frame, states, windows = run_data
    fits = fit(frame, "iceberg", states=states, windows=windows)
    listing = fit(frame, "parquet", states=states, windows=windows)
    table = predict_table(
        1_800_000, 180, ["1h", "1d", "30d"], 700, fits["local"], ["1MB", "8MB"], 379, listing, threads=THREADS
    )
    iceberg = table[table["format"] == "iceberg"].set_index(["layout", "window"])
    assert list(dict.fromkeys(iceberg.index.get_level_values(0))) == [
        "as_ingested",
        "rewrite_1mb",
        "rewrite_8mb",
    ]
    assert iceberg.loc[("rewrite_8mb", "1d"), "manifests_read"] == 2
    assert iceberg.loc[("rewrite_8mb", "30d"), "manifests_read"] == 27
    assert (
        iceberg.loc[("rewrite_8mb", "1h"), "entries_read"]
        == iceberg.loc[("rewrite_8mb", "1d"), "entries_read"]
    )
    assert iceberg.loc[("as_ingested", "30d"), "entries_read"] == 1_800_000
    # Two manifests of 11,983 on four threads: one thread reads the larger; 27 of them: a quarter each.
    assert iceberg.loc[("rewrite_8mb", "1d"), "busiest_thread_entries"] == 11_983
    assert iceberg.loc[("rewrite_8mb", "30d"), "busiest_thread_entries"] == 27 * 11_983 / 4
    for (layout, window), r in iceberg.iterrows():
        truth = planted(
            "iceberg",
            "local",
            {
                "manifests_read": r.manifests_read,
                "busiest_thread_entries": r.busiest_thread_entries,
                "entries_matched": r.entries_matched,
            },
        )
        assert r.predicted_ms == pytest.approx(truth, rel=0.05), (layout, window)
        assert r.lo_ms < r.predicted_ms < r.hi_ms
    parquet = table[table["format"] == "parquet"].set_index(["mode", "window"])
    assert len(parquet) == 2 * 3
    assert parquet.loc[("listing_serial", "30d"), "files_listed"] == 300_000
    truth = planted("parquet", "listing_serial", {"partitions_listed": 30, "files_listed": 300_000})
    assert parquet.loc[("listing_serial", "30d"), "predicted_ms"] == pytest.approx(truth, rel=0.05)


def test_recommend_takes_the_least_summed_prediction():
    table = pd.DataFrame(
        {
            "format": "iceberg",
            "layout": ["as_ingested"] * 2 + ["rewrite_1mb"] * 2 + ["rewrite_8mb"] * 2,
            "target_bytes": [None, None, 2**20, 2**20, 8 * 2**20, 8 * 2**20],
            "manifests": [379, 379, 1203, 1203, 151, 151],
            "entries_per_manifest": [4749.0, 4749.0, 1497.0, 1497.0, 11983.0, 11983.0],
            "window": ["1d", "30d"] * 3,
            "predicted_ms": [5000.0, 5000.0, 100.0, 900.0, 300.0, 500.0],
        }
    )
    rec = recommend(table)
    assert (rec["layout"], rec["target"], rec["summed_ms"], rec["as_ingested_ms"]) == (
        "rewrite_8mb",
        "8MB",
        800,
        10_000,
    )
    line = recommendation_line(rec)
    assert (
        line.startswith("recommended: rewrite to 8MB manifests (151 manifests")
        and "as ingested: 10,000 ms" in line
    )
