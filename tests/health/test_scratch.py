"""The scratch copy (icelab.health.scratch) and the "after" the doctor measures on it, on tables
plain Spark SQL wrote in the shapes a rule alone used to call healthy: a daily job appending one
day at a time, an hourly one appending one hour at a time (each partition planned from one
manifest: "aligned"), and an identity + day table whose rules do not trip."""

from __future__ import annotations

import fcntl
import io
import os
import statistics
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from icelab.datagen.spark_sql_shapes import unit_by_unit
from icelab.health.measured import ROUND_CAP, STEADY, TIME_CAP, steady
from icelab.health.scratch import DIRECTORY, LOCK, sweep, traces, tree
from tests.tools.test_doctor import killed, main, outcome
from tests.warehouses import own_warehouse

CATALOG = "scratch_t"
REPO = Path(__file__).resolve().parents[2]
PLANS = 3


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "scratch", CATALOG)


@pytest.fixture(scope="module")
def shapes(ctx, warehouse) -> dict[str, Path]:
    spark = ctx.spark
    return {
        "daily": unit_by_unit(spark, CATALOG, warehouse, "daily", appends=12),
        "hourly": unit_by_unit(spark, CATALOG, warehouse, "hourly", appends=12, unit="hour"),
        "region_days": unit_by_unit(
            spark, CATALOG, warehouse, "region_days", appends=24, span=2, region=True, merge=None
        ),
    }


@pytest.fixture(scope="module")
def measured(shapes, warehouse, tmp_path_factory) -> tuple[dict[str, dict], list[str], Path]:
    """The doctor on the three tables in one session, measuring (its default, at PLANS plans a
    block): each table's report, the traces it left in the warehouse, the results directory."""
    results = tmp_path_factory.mktemp("scratch-results")
    before = tree(warehouse)
    out = io.StringIO()
    with redirect_stdout(out):
        main([*map(str, shapes.values()), "--measure-plans", str(PLANS), "--results", str(results)], True)
    reports = {}
    for name, part in zip(shapes, out.getvalue().split("icelab doctor: ")[1:], strict=True):
        _, reports[name], _, _ = outcome(0, part)
    return reports, traces(before, tree(warehouse)), results


@pytest.mark.parametrize(
    ("name", "rule"),
    [("daily", "aligned"), ("hourly", "aligned"), ("region_days", "no rule tripped")],
)
def test_a_table_the_rules_call_healthy_is_measured_on_a_copy_and_judged_by_it(measured, name, rule):
    report = measured[0][name]
    state = report["states"][0]
    assert report["basis"] == "measured on a scratch copy", state["why"]
    # The rule is a reason beside the measured saving, not the verdict.
    assert f"(the rules alone: {rule}" in state["why"] and "measured on a scratch copy" in state["why"]
    rows = report["measured_after"]
    assert [r["window"] for r in rows] == ["1d", "7d", "30d"]
    for r in rows:
        assert r["before_measured_ms"] > 0 and r["after_measured_ms"] > 0 and r["measured_plans"] >= PLANS, r
    # The longest window opens one manifest per append now; the copy, rewritten, far fewer.
    assert rows[-1]["after_manifests"] < rows[-1]["before_manifests"] / 2, rows[-1]
    assert report["scratch"]["seconds"]["scratch_rewrite"] > 0 and report["scratch"]["kept"] is False


def test_the_tables_are_left_as_they_were_and_the_copies_go(measured, shapes, warehouse):
    reports, left, results = measured
    assert left == []  # every file and directory of the warehouse: same bytes, same mtime
    assert sorted(p.name for p in (warehouse / "db").iterdir()) == sorted(shapes)  # no table added
    assert list((results / DIRECTORY).iterdir()) == []
    for report in reports.values():
        assert not Path(report["scratch"]["directory"]).exists()
        assert report["scratch"]["table"].split(".")[0] != CATALOG  # icelab's catalog, not the user's


def test_the_rounds_go_on_until_steady_and_the_figures_are_the_last_two_blocks(measured):
    for report in measured[0].values():
        info = report["scratch"]
        assert info["stopped"] in (STEADY, TIME_CAP, ROUND_CAP) and info["rounds"] >= 2 * PLANS, info
        for w in report["states"][0]["windows"]:
            plans = w["all_plans_ms"]
            assert len(plans) == info["rounds"] and w["measured_plans"] == 2 * PLANS, w
            assert w["measured_ms"] == pytest.approx(statistics.median(plans[-2 * PLANS :]), abs=0.1)
            assert w["steady"] == steady(plans, PLANS)
            if info["stopped"] == STEADY:
                assert w["steady"], w


def test_without_a_copy_the_table_is_planned_until_steady_too(shapes, tmp_path):
    """The predicted "after" rests on the plans now and the fixed plan: taken in the first rounds
    of a session they ran slow, so they are taken at steady state as the measured after is."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(
            [str(shapes["daily"]), "--no-copy", "--measure-plans", str(PLANS), "--results", str(tmp_path)],
            True,
        )
    _, report, _, _ = outcome(code, out.getvalue())
    assert report["basis"] == "predicted" and report["scratch"] is None, report["basis"]
    rounds = report["rounds"]
    assert rounds["stopped"] in (STEADY, TIME_CAP, ROUND_CAP) and rounds["rounds"] >= 2 * PLANS, rounds
    state = report["states"][0]
    for w in [*state["windows"], state["fixed_plan"]]:
        assert len(w["all_plans_ms"]) == rounds["rounds"] and w["measured_plans"] == 2 * PLANS, w
        assert w["measured_ms"] == pytest.approx(statistics.median(w["all_plans_ms"][-2 * PLANS :]), abs=0.1)


def test_steady_needs_two_blocks_whose_medians_agree():
    assert not steady([50.0] * 5, 3)  # fewer than two blocks
    assert steady([50, 52, 49, 51, 50, 48], 3)
    # The first rounds of a session run slow: a block of them does not agree with the next.
    assert not steady([104, 101, 99, 67, 66, 69], 3)
    assert steady([104, 101, 99, 67, 66, 69, 68, 65, 67], 3)  # it looks at the last two only


def test_a_scratch_copy_that_cannot_be_written_is_one_line_and_leaves_nothing(shapes, tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    (results / DIRECTORY).write_text("a file where the scratch directory goes")
    code = main([str(shapes["daily"]), "--measure-plans", str(PLANS), "--results", str(results)], True)
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert code == 2 and len(err) == 1 and err[0].startswith("icelab: error: cannot write a scratch copy"), (
        err
    )
    assert sorted(p.name for p in results.iterdir()) == [DIRECTORY]


def test_a_copy_a_live_process_holds_is_not_swept(tmp_path):
    held, dead = tmp_path / "held", tmp_path / "dead"
    for d in (held, dead):
        d.mkdir()
        (d / LOCK).touch()
    fd = os.open(held / LOCK, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert sweep(tmp_path) == [dead] and held.is_dir() and not dead.exists()
    finally:
        os.close(fd)


def test_a_kill_during_the_scratch_phase_leaves_the_table_alone_and_the_next_run_sweeps(
    shapes, warehouse, tmp_path
):
    results = tmp_path / "results"
    before = tree(warehouse)
    # Killed on the copy, after its target was set and before its rewrite.
    proc = killed(
        [str(shapes["daily"]), "--measure-plans", str(PLANS), "--results", str(results)], "doctor.scratch:2"
    )
    assert proc.returncode == -9, proc.stderr[-2000:]
    assert traces(before, tree(warehouse)) == []
    (left,) = (results / DIRECTORY).iterdir()  # the killed run's copy, its lock free
    assert (left / LOCK).exists()
    out = io.StringIO()
    with redirect_stdout(out):
        main([str(shapes["daily"]), "--measure-plans", "0", "--results", str(results)])
    assert not left.exists() and list((results / DIRECTORY).iterdir()) == []
