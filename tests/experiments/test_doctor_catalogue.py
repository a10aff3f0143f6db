"""The doctor's shape catalogue (icelab.experiments.doctor_catalogue) at the tests' sizes: every
shape Spark SQL or pyiceberg wrote gets the verdict, exit code and action it expects, and no
`--apply` (on a copy) leaves a window reading more manifests than before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from icelab.core.config import manifest_health_rules
from icelab.experiments.doctor_catalogue import REWRITE, SHAPES, check_catalogue, problems
from icelab.health.check import Policy
from icelab.health.forecast import fitted

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows(ctx, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """The whole catalogue, built once in a scratch warehouse and checked."""
    policy = Policy(rules=manifest_health_rules(), windows=("1d", "7d", "30d"))
    warehouse = tmp_path_factory.mktemp("catalogue")
    found = check_catalogue(ctx.spark, ctx.engine, warehouse, policy, fitted([REPO / "results"]), tiny=True)
    return {r["shape"]: r for r in found}


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
