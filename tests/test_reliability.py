"""kill -9 at every stage of a run, and two runs that meet over one dataset: `python run.py` for real.

One story over one micro dataset, each step a real run (how the kill tests work:
tests/reliability.py): a build killed half-way; two runs started together on that half-built
dataset (one rebuilds it, the other waits and reuses it; Spark's Hive catalog in both); then
runs killed during the experiment, while writing its results and inside a profile rewrite,
each on the directory the kill before it left; then one run that completes. Every step is a
fixture that records what it left; the tests check those records. Chaining the steps keeps
the tests to eight `python run.py` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from icelab.core import locks, run_state
from icelab.core.contract import MEASUREMENTS, validate
from icelab.core.runs import find_runs, latest_runs
from icelab.tools.validate import check_run
from tests.reliability import (
    PLANNED,
    assert_completes,
    dataset_dir,
    run,
    smoke_runs,
    two_at_once,
    with_data,
)

HIVE = "++engine.conf.spark.sql.catalogImplementation=hive"
PROFILES = ("profile=[as_ingested,rewrite_16kb]",)
# The killed runs after the dataset is built, in the order the story visits them: (kill point,
# overrides, rows the killed run keeps). `recovery` is killed inside the first write of its
# process, which is its salvage of the run `measurement` left, before it opens a run of its own.
KILLS = {
    "write": ("recorder.write:1", (), 8),  # measurements.parquet at its temporary name, not renamed
    "measurement": ("protocol.measurement:9", (), 9),  # round 1 flushed, 1 row of round 2
    "recovery": ("recorder.write:1", (), None),
    "profile": ("profile.rewrite+1.0", PROFILES, None),  # inside `rewrite_manifests` of a profile copy
}


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The story's directory: data, results and Hydra outputs of every step."""
    return tmp_path_factory.mktemp("micro")


@pytest.fixture(scope="module")
def killed_build(story: Path) -> subprocess.CompletedProcess:
    """Step 1: a run killed inside batch 2's Iceberg write or commit."""
    return run(story, kill_at="ingest.iceberg_append:2+0.5")


@pytest.fixture(scope="module")
def rebuilt(story: Path, killed_build: subprocess.CompletedProcess) -> list[str]:
    """Step 2: two runs at once on the half-built dataset, Hive catalog; their output."""
    # Derby would write metastore_db/ and derby.log into the working directory: it must not.
    # Their temporary directories (each run's own Derby metastore) go to the story's `tmp`.
    (story / "tmp").mkdir()
    return two_at_once(story, HIVE, cwd=story, env={**os.environ, "TMPDIR": str(story / "tmp")})


@pytest.fixture(scope="module")
def kills(story: Path, rebuilt: list[str]) -> dict[str, Any]:
    """Step 3: a killed run for each of KILLS, then one that completes; what each left."""
    seen: dict[str, Any] = {}
    for step, (kill_at, extra, _) in KILLS.items():
        before = set(smoke_runs(story))
        proc = run(story, *extra, kill_at=kill_at)
        new = sorted(set(smoke_runs(story)) - before)
        statuses = {r.path: r.status for r in find_runs(story / "results")}
        seen[step] = {
            "proc": proc,
            "runs": new,
            "recorded": [run_state.read(r)["status"] for r in new],
            "seen_as": [(run_state.status(r), statuses[r]) for r in new],
            "problems": [" ".join(check_run(r).problems) for r in new],
            "earlier": {r: statuses[r] for r in before},
        }
    seen["completed"] = assert_completes(story, *PROFILES)
    return seen


def test_kill_during_generation_leaves_no_mark_and_a_table_at_its_last_commit(story, killed_build, ctx):
    assert killed_build.returncode == -9, killed_build.stderr[-3000:]
    half = dataset_dir(story)
    assert not (half / "dataset.json").exists()  # (a) nothing marks it finished
    assert smoke_runs(story) == []  # no run directory before the dataset is ready

    # (c) The half-built Iceberg table is still a table: its last commit reads in full.
    catalog = "kill_" + half.name.replace("-", "_")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}.type", "hadoop")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}.cache-enabled", "false")
    ctx.spark.conf.set(f"spark.sql.catalog.{catalog}.warehouse", f"file://{half}/iceberg")
    table = f"{catalog}.bench.events"
    snapshots = ctx.spark.sql(f"SELECT summary['total-records'] AS n FROM {table}.snapshots").collect()
    assert 1 <= len(snapshots) <= 3
    committed = int(snapshots[-1].n)
    assert ctx.spark.table(table).count() == committed > 0


def test_two_runs_at_once_on_a_half_built_dataset_rebuild_it_once(story, rebuilt):
    """One rebuilds the dataset, the other waits (saying so), then reuses it."""
    rebuilding = [out for out in rebuilt if "no completion mark: an interrupted build" in out]
    waited = [out for out in rebuilt if "icelab: waiting for dataset micro-" in out]
    assert len(rebuilding) == 1 and len(waited) == 1 and "in use by pid" in waited[0]
    runs = smoke_runs(story)
    created = {json.loads((r / "env.json").read_text())["dataset"]["created_utc"] for r in runs}
    assert len(created) == 1  # built once
    marker = json.loads((dataset_dir(story) / "dataset.json").read_text())
    both = marker["verification"]
    assert both["iceberg"] == both["parquet"] and both["iceberg"][0] == 3000
    assert marker["summary"]["iceberg"]["snapshots"] == 3  # all 3 commits, from scratch


def test_two_runs_with_spark_hive_catalog_at_once_get_a_metastore_each(story, rebuilt):
    """Embedded Derby admits one JVM per database: each session gets its own, no Derby error, and
    it is gone once its run has ended."""
    assert not any("derby" in out.lower() for out in rebuilt)
    assert not (story / "metastore_db").exists() and not (story / "derby.log").exists()
    assert list((story / "tmp").glob("icelab-metastore-*")) == []
    for found in smoke_runs(story):
        conf = json.loads((found / "env.json").read_text())["spark_conf"]
        assert conf["spark.sql.catalogImplementation"] == "hive"


@pytest.mark.parametrize("step", ["write", "measurement"])
def test_kill_during_the_experiment(story, kills, step):
    seen, kept = kills[step], KILLS[step][2]
    assert seen["proc"].returncode == -9, seen["proc"].stderr[-3000:]
    (first,) = seen["runs"]
    # Right after the kill: still 'running' on disk, but its process is gone, so readers and
    # the validator see it 'abandoned' at once; a run killed earlier is 'interrupted' for good.
    assert seen["recorded"] == ["running"] and seen["seen_as"] == [("abandoned", "abandoned")]
    assert "run status is 'abandoned'" in seen["problems"][0]
    assert set(seen["earlier"].values()) <= {"interrupted", "complete"}

    # (b) After the next run: marked interrupted, every row it measured on disk, not mixed in.
    info = run_state.read(first)
    assert info["status"] == "interrupted" and "ended without closing the run" in info["ended"]
    assert info["rows"] == kept
    assert latest_runs(find_runs(story / "results"))["smoke"].path == kills["completed"]
    problems = " ".join(validate(first))
    assert "run status is 'interrupted'" in problems
    assert f"{kept} rows, but {PLANNED} were planned" in problems
    assert not list(first.glob(f".{MEASUREMENTS}.tmp*"))  # a write cut short is redone by recovery


def test_kill_while_salvaging_a_killed_run_loses_none_of_its_rows(kills):
    seen, left = kills["recovery"], kills["measurement"]["runs"][0]
    assert seen["proc"].returncode == -9, seen["proc"].stderr[-3000:]
    assert seen["runs"] == []  # killed before it opened a run of its own
    # Still abandoned, not marked with its rows unrecovered: the next run salvages it again.
    assert seen["earlier"][left] == "abandoned"
    assert run_state.read(left)["rows"] == KILLS["measurement"][2]
    assert not list(left.glob(f".{MEASUREMENTS}.tmp*"))


def test_a_run_with_charts_false_draws_none(kills):
    """MICRO's charts=false reaches the experiment: results without a chart file."""
    assert [p.name for p in kills["completed"].iterdir() if p.suffix in (".png", ".svg")] == []


def test_kill_inside_a_profile_rewrite(kills):
    seen = kills["profile"]
    assert seen["proc"].returncode == -9, seen["proc"].stderr[-3000:]
    variants = json.loads((kills["completed"] / "run.json").read_text())["variants"]
    copy, original = variants["iceberg/rewrite_16kb"], variants["iceberg/as_ingested"]
    # Re-made from the dataset's table: exactly one rewrite commit on top, whatever the kill left.
    assert copy["snapshots"] == original["snapshots"] + 1 and copy["snapshot_id"] != original["snapshot_id"]


def test_a_second_run_refuses_clearly_when_told_not_to_wait(tmp_path, story, rebuilt):
    tmp = with_data(tmp_path, story / "data")
    marker = json.loads((dataset_dir(tmp) / "dataset.json").read_text())
    key = locks.key_of(f"file://{dataset_dir(tmp)}")  # the symlinked path: the same lock
    assert key == locks.key_of(marker["uri"])
    locks.owner = "a test holding the dataset"
    locks.acquire(key, "the micro dataset", exclusive=True)
    try:
        proc = run(tmp, "lock_wait_s=0")
    finally:
        locks.release(key)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith(f"icelab: error: dataset {marker['name']}-{marker['hash']} is in use by pid")
    assert "a test holding the dataset" in lines[-1] and "lock_wait_s=0" in lines[-1]
