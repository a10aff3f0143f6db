"""kill -9 while a dataset is built, and two runs at once on a dataset neither has built.

How the kill tests work: tests/reliability.py.
"""

from __future__ import annotations

import json

import pytest

from icelab.core.contract import validate
from tests.reliability import dataset_dir, run, smoke_runs, two_at_once


@pytest.mark.parametrize(
    "kill_at",
    [
        "ingest.iceberg_append:2+0.5",  # inside batch 2's Iceberg write or commit
    ],
)
def test_kill_during_generation(tmp_path, ctx, kill_at):
    killed = run(tmp_path, kill_at=kill_at)
    assert killed.returncode == -9, killed.stderr[-3000:]
    half = dataset_dir(tmp_path)
    assert not (half / "dataset.json").exists()  # (a) nothing marks it finished
    assert smoke_runs(tmp_path) == []  # no run directory before the dataset is ready

    # (c) The half-built Iceberg table is still a table: its last commit reads in full.
    catalog = "kill_" + half.name.replace("-", "_")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}.type", "hadoop")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}.warehouse", f"file://{half}/iceberg")
    table = f"{catalog}.bench.events"
    snapshots = ctx.spark.sql(f"SELECT summary['total-records'] AS n FROM {table}.snapshots").collect()
    assert 1 <= len(snapshots) <= 3
    committed = int(snapshots[-1].n)
    assert ctx.spark.table(table).count() == committed > 0

    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "no completion mark: an interrupted build" in proc.stdout + proc.stderr  # rebuilt, not reused
    assert validate(smoke_runs(tmp_path)[-1]) == []
    marker = json.loads((dataset_dir(tmp_path) / "dataset.json").read_text())
    both = marker["verification"]
    assert both["spark/iceberg"] == both["spark/parquet"] and both["spark/iceberg"][0] == 3000
    assert marker["summary"]["iceberg"]["snapshots"] == 3  # all 3 commits, from scratch


def test_two_runs_at_once_on_a_new_dataset_both_complete(tmp_path):
    """One builds the dataset, the other waits (saying so), then reuses it."""
    errs = two_at_once(tmp_path)
    waited = [err for err in errs if "icelab: waiting for dataset micro-" in err]
    assert len(waited) == 1 and "in use by pid" in waited[0]
    runs = smoke_runs(tmp_path)
    created = {json.loads((r / "env.json").read_text())["dataset"]["created_utc"] for r in runs}
    assert len(created) == 1  # built once
