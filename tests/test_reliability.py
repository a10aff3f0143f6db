"""kill -9 after the dataset is built, and runs that meet over one dataset: `python run.py` for real.

How the kill tests work: tests/reliability.py. These share one finished micro dataset; the tests
that build a dataset themselves are in test_reliability_build.py (two files, so the two test
workers share the child processes).
"""

from __future__ import annotations

import json
from pathlib import Path

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


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished micro dataset (its data directory) for the kill points after generation."""
    tmp = tmp_path_factory.mktemp("micro")
    proc = run(tmp)  # builds it, then runs the smoke benchmark once
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "data"


@pytest.mark.parametrize(
    ("kill_at", "kept"),
    [
        ("protocol.measurement:9", 9),  # during the experiment: round 1 flushed, 1 row of round 2
        ("recorder.write:1", 8),  # while writing measurements.parquet: temp written, not renamed
    ],
)
def test_kill_during_the_experiment(tmp_path, built, kill_at, kept):
    tmp = with_data(tmp_path, built)
    killed = run(tmp, kill_at=kill_at)
    assert killed.returncode == -9, killed.stderr[-3000:]
    (first,) = smoke_runs(tmp)
    assert run_state.read(first)["status"] == "running"
    assert run_state.status(first) == "abandoned"  # its process is gone: readers see it so at once
    assert [r.status for r in find_runs(tmp / "results")] == ["abandoned"]
    assert "run status is 'abandoned'" in " ".join(check_run(first).problems)  # the validator names it

    second = assert_completes(tmp)
    # (b) the killed run: marked interrupted, every row it measured on disk, not mixed in.
    info = run_state.read(first)
    assert info["status"] == "interrupted" and "ended without closing the run" in info["ended"]
    assert info["rows"] == kept
    assert first != second and latest_runs(find_runs(tmp / "results"))["smoke"].path == second
    problems = " ".join(validate(first))
    assert "run status is 'interrupted'" in problems
    assert f"{kept} rows, but {PLANNED} were planned" in problems
    assert not list(first.glob(f".{MEASUREMENTS}.tmp*"))  # a write cut short is redone by recovery


def test_kill_inside_a_profile_rewrite(tmp_path, built, ctx):
    tmp = with_data(tmp_path, built)
    profile = ["profile=[as_ingested,rewrite_16kb]"]
    killed = run(tmp, *profile, kill_at="profile.rewrite+1.0")
    assert killed.returncode == -9, killed.stderr[-3000:]
    second = assert_completes(tmp, *profile)
    variants = json.loads((second / "run.json").read_text())["variants"]
    copy, original = variants["iceberg/rewrite_16kb"], variants["iceberg/as_ingested"]
    # Re-made from the dataset's table: exactly one rewrite commit on top, whatever the kill left.
    assert copy["snapshots"] == original["snapshots"] + 1 and copy["snapshot_id"] != original["snapshot_id"]


def test_a_second_run_refuses_clearly_when_told_not_to_wait(tmp_path, built):
    tmp = with_data(tmp_path, built)
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


def test_two_runs_with_spark_hive_catalog_at_once(tmp_path, built):
    """Embedded Derby admits one JVM per database: each session gets its own, no Derby error."""
    tmp = with_data(tmp_path, built)
    # Derby would write metastore_db/ and derby.log into the working directory: it must not.
    errs = two_at_once(tmp, "++engine.conf.spark.sql.catalogImplementation=hive", cwd=tmp)
    assert not any("derby" in err.lower() for err in errs)
    assert not (tmp / "metastore_db").exists() and not (tmp / "derby.log").exists()
    runs = smoke_runs(tmp)
    conf = json.loads((runs[0] / "env.json").read_text())["spark_conf"]
    assert conf["spark.sql.catalogImplementation"] == "hive"
