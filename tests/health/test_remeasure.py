"""The independent re-measure (icelab.health.remeasure): the doctor's rewrite run again on a fresh
scratch copy and planned beside the table until steady, leaving the table as it was. The tests
run it in the shared session; the catalogue experiment runs it in a fresh process."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core.config import manifest_health_rules
from icelab.datagen.spark_sql_shapes import unit_by_unit
from icelab.health.check import Policy
from icelab.health.diagnosis import diagnose
from icelab.health.measured import ROUND_CAP, STEADY
from icelab.health.remeasure import job, main, remeasure
from icelab.health.scratch import DIRECTORY, traces, tree
from icelab.health.source import resolve
from tests.warehouses import own_warehouse

CATALOG = "remeasure_t"
PLANS = 3
WINDOWS = ("1d", "7d", "30d")


@pytest.fixture(scope="module")
def daily(ctx, tmp_path_factory) -> tuple[Path, Path]:
    """A daily job's table (a manifest per day), and a results directory."""
    warehouse = own_warehouse(ctx, tmp_path_factory, "remeasure", CATALOG)
    return unit_by_unit(ctx.spark, CATALOG, warehouse, "daily", appends=12), warehouse


@pytest.fixture(scope="module")
def doctored(ctx, daily, tmp_path_factory) -> tuple[dict, Path]:
    """The job the doctor's own measured run on the table gives, and the results directory."""
    table, _ = daily
    results = tmp_path_factory.mktemp("remeasure-results")
    done = diagnose(
        ctx.spark,
        ctx.engine,
        resolve(str(table)),
        Policy(rules=manifest_health_rules(), windows=WINDOWS),
        None,
        copy=True,
        scratch_dir=results / DIRECTORY,
        measure_plans=PLANS,
    )
    return job(
        "daily", str(table), done.first.health.windows, done.applied, done.scratch_info["table"]
    ), results


def test_the_doctors_rewrite_runs_again_on_a_fresh_copy_and_is_planned_until_steady(ctx, daily, doctored):
    given, results = doctored
    table, warehouse = daily
    assert [s["text"].split()[0] for s in given["statements"]] == ["ALTER", "CALL", "ALTER"], given
    seen = tree(warehouse)
    row = remeasure(ctx.spark, ctx.engine, given, results / DIRECTORY, PLANS)
    # The doctor's statements, on this copy's own catalog: its copy is gone.
    assert len(row["statements"]) == 3 and given["doctor_catalog"] not in " ".join(row["statements"])
    assert row["manifests"]["after"] < row["manifests"]["now"] == 12, row["manifests"]
    assert row["rounds"]["stopped"] in (STEADY, ROUND_CAP), row["rounds"]
    assert [w["window"] for w in row["windows"]] == list(WINDOWS)
    for w in row["windows"]:
        for state in ("now", "after"):
            # The figures are the last two blocks of PLANS plans.
            assert w[state]["measured_plans"] == 2 * PLANS and w[state]["measured_ms"] > 0, w
    longest = row["windows"][-1]
    assert longest["after"]["manifests_scanned"] < longest["now"]["manifests_scanned"], longest
    # The table is as it was, and the copy is gone.
    assert traces(seen, tree(warehouse)) == []
    assert list((results / DIRECTORY).iterdir()) == []


def test_a_table_the_doctor_did_not_rewrite_gets_icebergs_rewrite_at_its_defaults(ctx, daily, doctored):
    given, results = doctored
    row = remeasure(
        ctx.spark, ctx.engine, given | {"statements": [], "doctor_catalog": None}, results / DIRECTORY, 1
    )
    assert (
        len(row["statements"]) == 1 and "system.rewrite_manifests(table => 'scratch." in row["statements"][0]
    )
    assert row["manifests"]["after"] < row["manifests"]["now"]


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "config.yaml"), str(tmp_path / "jobs.json"), str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("icelab: error: no such file:"), err
    assert main([]) == 2
