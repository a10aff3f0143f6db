"""The doctor's planning measured on the table itself (`icelab/health/measured.py`), on a table plain
Spark SQL wrote: each window's plan scans exactly the manifests `check.window_kept` says it keeps,
read-only, and `--measure-plans 0` plans nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from icelab.health import measured
from tests.tools.test_doctor import doctor, metadata_files, snapshot_id
from tests.tools.test_doctor_verdict import DAY0
from tests.warehouses import own_warehouse

CATALOG = "measured_t"
TABLE = f"{CATALOG}.db.staggered"
# One INSERT per (first day, last day) from 2026-01-01, one manifest each: the windows ending at
# day 29 meet their bounds exactly, so a filter a day off scans another count.
INSERTS = [(0, 29), (0, 19), (10, 19), (20, 20), (29, 29)]
# Manifests each window keeps: 1d is day 29, 10d days 20-29, 30d every day; as of the fourth
# INSERT, without the day-29 manifest.
KEPT = {"1d": 2, "10d": 3, "30d": 5}
KEPT_BEFORE_LAST = {"1d": 1, "10d": 2, "30d": 4}
WINDOWS = [arg for w in KEPT for arg in ("--window", w)]


@pytest.fixture(scope="module")
def staggered(ctx, tmp_path_factory) -> Path:
    """A days(ts) table of five INSERTs over staggered days: 30 day partitions, five manifests."""
    warehouse = own_warehouse(ctx, tmp_path_factory, "measured", CATALOG)
    ctx.spark.sql(
        f"CREATE TABLE {TABLE} (id bigint, ts timestamp, v string) USING iceberg PARTITIONED BY (days(ts))"
    )
    for first, last in INSERTS:
        ctx.spark.sql(
            f"INSERT INTO {TABLE} SELECT id, timestamp_seconds({DAY0} + id * 86400 + 3600), concat('v', id) "
            f"FROM range({first}, {last + 1})"
        )
    return warehouse


def test_each_window_plan_scans_the_manifests_the_window_keeps(ctx, staggered, results, capsys):
    before, files = snapshot_id(ctx.spark, TABLE), metadata_files(staggered, "staggered")
    table_dir = staggered / "db" / "staggered"
    before_last = table_dir / "metadata" / f"v{len(INSERTS)}.metadata.json"  # read by path: a view
    for given, kind, kept in ((table_dir, "hadoop", KEPT), (before_last, "path", KEPT_BEFORE_LAST)):
        _, report, _, out = doctor(capsys, results, str(given), *WINDOWS, measure=True)
        state = report["states"][0]
        assert report["table"]["kind"] == kind and state["manifests"] == max(kept.values())
        assert {w["window"]: w["manifests"] for w in state["windows"]} == kept
        for w in state["windows"]:
            assert w["manifests_scanned"] == w["manifests"], w
            # At least the five plans asked for, more while the verdict was undecided (at most 15).
            assert 5 <= w["measured_plans"] <= 15 and w["measured_ms"] > 0, w
            low, high = w["measured_range_ms"]
            assert low <= w["measured_ms"] <= high
            assert w["measured_snapshot_id"] == state["snapshots"]["current"]
            line = rf"{w['window']}: \d+ ms measured \[\d+-\d+\] \(\d+ plans; {w['manifests']} manifests?\)$"
            assert re.search(line, out, re.M), (line, out)
        assert "planning now, measured on the table" in out
        run = report["doctor"]
        assert run["measure_plans"] == 5 and run["measure_warmups"] == 2 and run["seconds"] > 0
        assert 0 < run["driver_heap_peak_bytes"] <= run["driver_heap_max_bytes"]
        assert re.search(r"doctor: [\d.]+ s; driver heap peak at most [\d.]+ [kMG]B", out)
    # Measuring plans only: nothing was written to the table.
    assert snapshot_id(ctx.spark, TABLE) == before and metadata_files(staggered, "staggered") == files


def test_measure_plans_0_plans_nothing_and_says_so(staggered, results, capsys, monkeypatch):
    def no_plan(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("planned with --measure-plans 0")

    monkeypatch.setattr(measured, "measure", no_plan)
    _, report, _, out = doctor(
        capsys, results, str(staggered / "db" / "staggered"), *WINDOWS, "--measure-plans", "0"
    )
    windows = report["states"][0]["windows"]
    assert [w["window"] for w in windows] == list(KEPT)
    for w in windows:
        assert (w["measured_ms"], w["measured_plans"], w["manifests_scanned"]) == (None, 0, None), w
    assert report["doctor"]["measure_plans"] == 0 and report["doctor"]["measure_warmups"] == 0
    assert "planning now: not measured (--measure-plans 0)" in out


def test_after_apply_on_a_copy_the_rewritten_state_is_measured_too(ctx, staggered, results, capsys):
    before = snapshot_id(ctx.spark, TABLE)
    _, report, _, out = doctor(
        # The copy is rewritten to the layout meant whatever the measured verdict.
        capsys,
        results,
        str(staggered / "db" / "staggered"),
        *WINDOWS,
        "--copy",
        measure=True,
    )
    after = report["states"][1]
    assert after["state"] == "after_apply (copy)" and after["manifests"] < len(INSERTS)
    for w in after["windows"]:
        # The last two blocks of 5 plans, once steady (or as many as the budget gave).
        assert w["manifests_scanned"] == w["manifests"] and w["measured_plans"] >= 5, w
    assert "planning after, measured on the table" in out
    assert snapshot_id(ctx.spark, TABLE) == before  # the copy was rewritten, not the table


def test_a_spent_budget_leaves_one_cold_plan_then_none(staggered, results, capsys):
    # Any plan outlasts a microsecond: the first window gets its warm-up as its one plan, and
    # the budget is spent before the others.
    table = str(staggered / "db" / "staggered")
    _, report, _, out = doctor(capsys, results, table, *WINDOWS, "--measure-budget", "0.000001", measure=True)
    first, *rest = report["states"][0]["windows"]
    assert first["measured_plans"] == 1 and first["measured_cold"] and first["measured_ms"] > 0, first
    assert first["manifests_scanned"] == first["manifests"], first
    for w in rest:
        assert (w["measured_ms"], w["measured_plans"]) == (None, 0), w
        assert w["measure_skipped"] == "the measuring budget (1e-06 s) was spent", w
        assert f"{w['window']}: not measured: the measuring budget (1e-06 s) was spent" in out
    assert "one cold plan: more would pass the measuring budget" in out
    assert report["doctor"]["measure_budget_s"] == 1e-06
    # No limit: every window gets its three plans after the warm-up.
    _, report, _, out = doctor(capsys, results, table, *WINDOWS, "--measure-budget", "none", measure=True)
    assert report["doctor"]["measure_budget_s"] is None
    windows = report["states"][0]["windows"]
    assert all(w["measured_plans"] >= 5 and not w["measured_cold"] for w in windows), windows


@pytest.mark.parametrize("budget", ["0", "-5", "soon"])
def test_a_bad_budget_is_one_line(staggered, results, capsys, budget):
    from tests.tools.test_doctor import _one_line_error, main

    code = main([str(staggered / "db" / "staggered"), "--measure-budget", budget, "--results", str(results)])
    _one_line_error(code, capsys.readouterr().err, f"bad --measure-budget '{budget}'")


def test_no_copy_with_copy_is_one_line(staggered, results, capsys):
    from tests.tools.test_doctor import _one_line_error, main

    code = main([str(staggered / "db" / "staggered"), "--no-copy", "--copy", "--results", str(results)])
    _one_line_error(code, capsys.readouterr().err, "--no-copy makes no copy: drop --copy and --keep-copy")
