"""kill -9 at chosen points, and two runs at once: `python run.py` for real, on a micro dataset.

Each kill test runs the smoke benchmark with `ICELAB_KILL_AT` set (icelab/failpoints.py: the
process SIGKILLs itself at that point, or a moment later inside the Iceberg write that follows),
then runs the same command again without it. The second run must complete on its own, and what
the first one left must be marked incomplete, never reused or mixed in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from icelab.core import locks, run_state
from icelab.core.contract import MEASUREMENTS, validate
from icelab.core.runs import find_runs, latest_runs
from icelab.tools.validate import check_run

REPO = Path(__file__).resolve().parents[1]
# The smoke benchmark shrunk to seconds: 2 queries x 2 windows x 2 variants x 2 rounds.
MICRO = [
    "engine.java_options='-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'",  # short runs: a JVM that starts fast
    "experiment=smoke",
    "dataset=tiny",
    "dataset.name=micro",
    "dataset.rows=3000",
    "dataset.span_days=8",
    "dataset.commits=3",
    "dataset.late_max_days=2",
    "experiment.queries=[count_window,nested_filter_window]",
    "experiment.windows=[1h,1d]",
    "experiment.ratio=[1d,1h]",
    "profile=[as_ingested]",
    "protocol.warmups=0",
    "protocol.repetitions=2",
    "protocol.executions=1",
    "protocol.overhead_pairs=0",
    "verify.duckdb=false",
    "engine.master='local[1]'",
    "engine.driver_memory=1g",
    "progress=false",
]
PLANNED = 2 * 2 * 2 * 2


def command(tmp: Path, *extra: str, outputs: str = "outputs") -> list[str]:
    """`python run.py` on the micro smoke benchmark with data, results and Hydra's output under `tmp`."""
    paths = [f"paths.data_dir={tmp / 'data'}", f"paths.results_dir={tmp / 'results'}"]
    return [sys.executable, str(REPO / "run.py"), *MICRO, *paths, *extra, f"hydra.run.dir={tmp / outputs}"]


def run(tmp: Path, *extra: str, kill_at: str | None = None) -> subprocess.CompletedProcess:
    """Run the micro smoke benchmark to its end (or to the kill point `kill_at`)."""
    env = {k: v for k, v in os.environ.items() if k != "ICELAB_KILL_AT"}
    if kill_at:
        env["ICELAB_KILL_AT"] = kill_at
    return subprocess.run(
        command(tmp, *extra), cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )


def two_at_once(tmp: Path, *extra: str, cwd: Path = REPO) -> list[str]:
    """Start the micro smoke benchmark twice at the same moment; both must succeed. Their stderr."""
    procs = [
        subprocess.Popen(
            command(tmp, *extra, outputs=f"outputs{i}"),
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    errs = [p.communicate(timeout=900)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-3000:] for err in errs]
    runs = smoke_runs(tmp)
    assert len(runs) == 2 and all(validate(r) == [] for r in runs)
    return errs


def smoke_runs(tmp: Path) -> list[Path]:
    runs = tmp / "results" / "runs" / "smoke"
    return sorted(runs.iterdir()) if runs.is_dir() else []


def dataset_dir(tmp: Path) -> Path:
    (found,) = (tmp / "data").glob("micro-*")
    return found


def assert_completes(tmp: Path, *extra: str) -> Path:
    """The same command again, without the kill: it completes and meets the contract."""
    proc = run(tmp, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    newest = smoke_runs(tmp)[-1]
    assert validate(newest) == [], validate(newest)
    assert (dataset_dir(tmp) / "dataset.json").is_file()
    return newest


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished micro dataset (its data directory) for the kill points after generation."""
    tmp = tmp_path_factory.mktemp("micro")
    proc = run(tmp)  # builds it, then runs the smoke benchmark once
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "data"


def with_data(tmp: Path, data: Path) -> Path:
    """A fresh results directory over the shared micro dataset."""
    (tmp / "data").symlink_to(data, target_is_directory=True)
    return tmp


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


def test_two_runs_at_once_on_a_new_dataset_both_complete(tmp_path):
    """One builds the dataset, the other waits (saying so), then reuses it."""
    errs = two_at_once(tmp_path)
    waited = [err for err in errs if "icelab: waiting for dataset micro-" in err]
    assert len(waited) == 1 and "in use by pid" in waited[0]
    runs = smoke_runs(tmp_path)
    created = {json.loads((r / "env.json").read_text())["dataset"]["created_utc"] for r in runs}
    assert len(created) == 1  # built once


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
