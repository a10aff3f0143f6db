"""Bad input at the command line: one clear line on stderr, exit status 2, no traceback.

These run `python run.py` for real; each fails before Spark starts, so they are quick.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import run_py


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_py(*args, env=env, timeout=120)  # each fails before Spark starts


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [lines[0]] and lines[0].startswith("icelab: error:"), proc.stderr
    assert needle in lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["dataset=huge"], "unknown dataset 'huge' (choose from: medium, small, tiny)"),
        (["experiment=nope"], "unknown experiment 'nope'"),
        (["dataset.scale=0"], "dataset.scale=0"),
        (["dataset.scale=-1"], "dataset.scale=-1"),
        (["experiment=smoke", "profile=[as_ingested,nope]"], "unknown profile 'nope'"),
        (["experiment=smoke", "protocol.executions=9"], "executions (9) exceeds repetitions (2)"),
        (["experiment=smoke", "experiment.windows=[1w,1d,30d]"], "bad window '1w'"),
        (["experiment=smoke", "experiment.queries=[q99]"], "unknown query 'q99'"),
        (["experiment=smoke", "experiment.ratio=[180d,1d]"], "ratio window 180d is not among the windows"),
        (["experiment=smoke", "experiment.ratio=[1d,1d]"], "ratio needs two different windows"),
        (["experiment=smoke", "profile.rewrite_8mb.manifest_target_size=8XB"], "bad size '8XB'"),
        (
            ["experiment=manifest_health", "+experiment.rules.bounds_p95={advise:1,need:2}"],
            "unknown rule 'bounds_p95'",
        ),
        (
            ["experiment=manifest_health", "experiment.rules.bounds_p90.advise=20"],
            "advise (20.0) is above need (16.0)",
        ),
        (["experiment=snapshot_expiry", "experiment.commits_per_day=0"], "experiment.commits_per_day=0"),
        (["experiment=canonical", "setup=[initial,nope]"], "unknown setup 'nope'"),
        (["experiment=canonical", "experiment.queries=[q99]"], "query 'q99' matches no query"),
        (
            ["experiment=canonical", "experiment.optimized=fast"],
            "experiment.optimized='fast' is not a selected",
        ),
        (
            ["experiment=canonical", "profile=[as_ingested]"],
            "setup 'manifest_rewrite' needs profile 'rewrite_8mb'",
        ),
    ],
)
def test_bad_input_gives_one_line(args, needle):
    assert_one_line_error(run_cli(*args), needle)


def test_unwritable_data_dir(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc = run_cli(f"paths.data_dir={blocker}/data")
    assert_one_line_error(proc, "is not writable")


def test_missing_java():
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = "/nonexistent"
    assert_one_line_error(run_cli(env=env), "Java not found")


def test_java_home_without_java(tmp_path):
    env = {**os.environ, "JAVA_HOME": str(tmp_path)}
    assert_one_line_error(run_cli(env=env), "JAVA_HOME")
