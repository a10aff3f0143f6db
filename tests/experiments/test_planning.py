"""The planning experiment end to end on tiny: the real smoke config, shrunk, through real Spark,
Iceberg and DuckDB; its results checked against the contract."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from icelab.core.contract import validate


@pytest.fixture(scope="module")
def run_dir(planning_run: Path) -> Path:
    return planning_run


@pytest.fixture(scope="module")
def rows(run_dir: Path) -> pd.DataFrame:
    return pd.read_parquet(run_dir / "measurements.parquet")


def test_run_meets_the_contract(run_dir):
    assert validate(run_dir) == []
    for name in ("env.json", "config.yaml", "summary.csv", "growth.csv", "overhead.csv", "answers.json"):
        assert (run_dir / name).is_file(), name
    env = json.loads((run_dir / "env.json").read_text())
    assert env["dataset"]["hash"] and env["git"]["commit"]
    assert env["spark_conf"]["spark.sql.iceberg.aggregate-push-down.enabled"] == "false"
    # The dataset's Iceberg catalog, registered at runtime, is recorded with its settings.
    catalog = f"spark.sql.catalog.ice_{env['dataset']['hash']}"
    assert env["catalogs"][f"{catalog}.type"] == "hadoop"
    assert env["catalogs"][f"{catalog}.cache-enabled"] == "false"
    assert env["catalogs"][f"{catalog}.warehouse"].endswith("/iceberg")


def test_every_case_and_round_has_a_row(rows):
    # 3 queries x 3 windows x 4 variants x (1 warm-up + 2 repetitions)
    assert len(rows) == 3 * 3 * 4 * 3
    keys = rows.groupby(["query_id", "variant", "window"]).repetition.apply(sorted)
    assert all(reps == [-1, 0, 1] for reps in keys)
    assert rows.loc[rows.warmup, "repetition"].eq(-1).all()
    # warm-ups and the second repetition plan only; the first repetition executes
    assert rows.executed.eq(rows.repetition == 0).all()
    assert rows.loc[~rows.executed, "execution_ms"].isna().all()
    assert (rows.status == "ok").all()


def test_answers_agree_across_variants_and_duckdb(run_dir):
    answers = json.loads((run_dir / "answers.json").read_text())
    assert len(answers) == 3 * 3
    assert all(a["agree"] and a["duckdb"] == a["checksums"][0] and a["variants"] == 4 for a in answers)


def test_scan_metrics_per_format(rows, tiny):
    ok = rows[rows.query_id == "count_window"]
    pq = ok[ok.format == "parquet"]
    assert (pq.partitions_scanned == pq.window.map({"1h": 1, "1d": 1, "7d": 7})).all()
    assert pq.manifests_scanned.isna().all() and pq.iceberg_planning_ms.isna().all()
    ice = ok[ok.variant == "iceberg/as_ingested"]
    assert (ice.manifests_total == tiny.dataset.config.commits).all()
    assert (ice.iceberg_planning_ms > 0).all()


def test_rewritten_manifests_align_with_days(rows):
    """A one-day window reads at most the two manifests that can share that day."""
    day = rows[(rows.variant == "iceberg/rewrite_16kb") & (rows.window == "1d")]
    assert (day.manifests_total > 6).all()
    assert (day.manifests_scanned <= 2).all()


def test_aggregate_pushdown_answers_day_aligned_count_from_metadata(rows):
    push = rows[(rows.variant == "iceberg/aggregate_pushdown") & (rows.query_id == "count_window_hidden")]
    by_window = push.groupby("window").scan_nodes.max()
    assert by_window["1d"] == 0 and by_window["7d"] == 0  # no scan at all
    assert by_window["1h"] == 1  # not day-aligned: Iceberg must scan
    # the Parquet-style `date` predicate in count_window blocks the push-down
    canonical = rows[(rows.variant == "iceberg/aggregate_pushdown") & (rows.query_id == "count_window")]
    assert (canonical.scan_nodes == 1).all()


def test_summary_has_medians_and_growth(run_dir):
    summary = pd.read_csv(run_dir / "summary.csv")
    assert len(summary) == 3 * 3 * 4
    assert (summary.planning_ms_n == 2).all() and (summary.execution_ms_n == 1).all()
    growth = pd.read_csv(run_dir / "growth.csv").set_index(["query_id", "variant"])
    assert len(growth) == 3 * 4
    # growth = median planning at 7d over median planning at 1d (experiment.ratio), per case
    rows = pd.read_parquet(run_dir / "measurements.parquet")
    medians = rows[~rows.warmup].groupby(["query_id", "variant", "window"]).planning_ms.median()
    expected = medians.xs("7d", level="window") / medians.xs("1d", level="window")
    assert growth.planning_ratio.to_dict() == pytest.approx(expected.to_dict())
    overhead = pd.read_csv(run_dir / "overhead.csv")
    assert len(overhead) == 3 * 4 and overhead.plain_ms.gt(0).all()


def test_charts_written_next_to_results(run_dir):
    for name in ("planning_vs_window", "manifests_vs_window", "iceberg_vs_harness_planning"):
        assert (run_dir / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        svg = (run_dir / f"{name}.svg").read_text()
        assert f"run {run_dir.name}" in svg, name  # the provenance footer names this run


def test_a_growth_with_no_rows_left_says_so_instead_of_nan():
    from icelab.experiments.planning import report

    summary = pd.DataFrame(
        {
            "query_id": ["q"] * 2,
            "variant": ["parquet"] * 2,
            "format": ["parquet"] * 2,
            "window": ["1d", "30d"],
            "window_hours": [24.0, 720.0],
            "planning_ms_median": [float("nan"), 12.0],
            "planning_ms_unstable": [False, False],
            "manifests_scanned": [None, None],
            "manifests_total": [None, None],
        }
    )
    growth = pd.DataFrame(
        [
            {
                "query_id": "q",
                "variant": "parquet",
                "planning_ratio": float("nan"),
                "iceberg_planning_ratio": float("nan"),
            }
        ]
    )
    text = report(summary, growth, pd.DataFrame(), ("30d", "1d"))
    assert "nan" not in text
    assert (
        "q                      parquet                      no rows left (all marked faulted or failed)"
        in text
    )
