"""The doctor's shape catalogue (icelab.experiments.doctor_catalogue) at the tests' sizes: every
shape Spark SQL or pyiceberg wrote gets the verdict, exit code and action it expects, and no
`--apply` (on a copy) leaves a window reading more manifests than before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from icelab.core.config import catalogue_config, manifest_health_rules
from icelab.experiments.doctor_catalogue import REWRITE, SHAPES, check_catalogue, problems
from icelab.health.check import Policy
from icelab.health.forecast import fitted

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows(ctx, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """The whole catalogue, built once in a scratch warehouse and checked."""
    policy = Policy(rules=manifest_health_rules(), windows=("1d", "7d", "30d"))
    warehouse = tmp_path_factory.mktemp("catalogue")
    model = fitted([REPO / "results"])
    found = check_catalogue(
        ctx.spark,
        ctx.engine,
        warehouse,
        policy,
        model,
        tiny=True,
        measure_plans=1,
        measure_warmups=0,
        scratch_dir=warehouse.parent / "catalogue-scratch",
    )
    return {r["shape"]: r for r in found}


def test_the_doctor_leaves_no_trace_on_any_shape(rows, tmp_path_factory):
    """Each shape's scratch copy is rewritten (and with --copy expired) while the warehouse's every
    file and directory, the catalog's tables with them, keep their bytes and mtimes; the copies go."""
    assert len(rows) == len(SHAPES) and all(r["traces"] == [] for r in rows.values()), [
        (r["shape"], r["traces"][:3]) for r in rows.values() if r["traces"]
    ]
    assert sum(r["applied"] for r in rows.values()) >= 5  # copies were written: a rewrite on each
    scratch = next(p for p in Path(tmp_path_factory.getbasetemp()).rglob("catalogue-scratch"))
    assert [p for p in scratch.iterdir()] == []  # each copy removed when its shape was done


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_each_shape_gets_its_expected_verdict_exit_and_action(rows, shape):
    got = rows[shape.name]
    assert (got["verdict"], got["exit_code"], got["action"]) == (
        shape.verdict,
        shape.exit_code,
        shape.action,
    ), got["why"]


def test_every_advised_rewrite_is_applied_to_a_copy_and_leaves_no_window_worse(rows):
    advised = [r for r in rows.values() if REWRITE in r["action"]]
    assert advised and all(r["applied"] and set(r["after"]) == set(r["before"]) for r in advised)
    for r in advised:
        assert all(r["after"][w] <= n for w, n in r["before"].items()), r
        assert not r["worse"] and r["after_verdict"] == "healthy", r
    assert problems(list(rows.values())) == []


def test_the_catalogue_has_both_writers():
    writers = {s.writer for s in SHAPES}
    assert writers == {"spark-sql", "pyiceberg"} and sum(s.writer == "pyiceberg" for s in SHAPES) >= 2


def test_each_window_of_a_shape_as_written_is_measured_beside_its_inputs_and_prediction(rows):
    """Where the doctor reads windows (the table has a time field), each is planned on the table as
    written: a time, beside the model's inputs from the metadata, which name the data manifests
    Iceberg's scan report says the plan opened."""
    timed = [r for r in rows.values() if r.get("now")]
    assert len({r["writer"] for r in timed}) == 2 and len(timed) >= 5
    for r in timed:
        for w in r["now"]:
            assert w["measured_plans"] == 1 and w["measured_ms"] > 0, (r["shape"], w)
            assert w["predicted_ms"] is not None, (r["shape"], w)
            data_manifests = w["manifests_read"] - w["delete_manifests"]
            assert w["manifests_scanned"] == data_manifests, (r["shape"], w)


def test_a_catalogue_run_names_its_sitting_for_the_blind_check(compose_cfg):
    """The blind check counts a run's sitting from its experiment.sitting (its date without one)."""
    named = catalogue_config(compose_cfg("experiment=doctor_catalogue", "experiment.sitting=2026-11-28a"))
    assert named.sitting == "2026-11-28a"
    assert catalogue_config(compose_cfg("experiment=doctor_catalogue")).sitting is None
