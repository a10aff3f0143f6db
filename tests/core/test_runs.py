"""Runs are found in both layouts, their status read, and named by directory or run id."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.core.runs import find_run, find_runs, latest_runs, select_runs

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"
CANONICAL = "20261121T134249Z-cce90f"


def test_the_fixture_lists_every_run_with_its_task_and_status():
    runs = {(r.experiment, r.run_id): r for r in find_runs(FIXTURE)}
    assert {e for e, _ in runs} == {
        "canonical",
        "manifest_8mb",
        "manifest_health",
        "schema_evolution",
        "snapshot_expiry",
    }
    assert runs[("manifest_8mb", "20261121T114416Z-ac7555")].task == "planning"
    # No run.json: complete because the task's last file is there.
    assert runs[("manifest_health", "20261121T124318Z-c9f1a0")].complete
    assert runs[("snapshot_expiry", "20261121T124651Z-24369b")].complete
    assert latest_runs(list(runs.values()))["manifest_8mb"].run_id == "20261121T114416Z-ac7555"


def test_both_layouts_and_the_newest_complete_run(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(FIXTURE / "canonical", results / "reference" / "canonical")
    newer = results / "runs" / "canonical" / "20261122T000000Z-aaaaaa"
    shutil.copytree(FIXTURE / "canonical" / CANONICAL, newer)
    (newer / "run.json").write_text(json.dumps({"status": "running"}))
    assert select_runs(results, {})["canonical"].run_id == CANONICAL
    assert select_runs(results, {}, include_incomplete=True)["canonical"].run_id == newer.name
    assert select_runs(results, {"canonical": newer.name})["canonical"].path == newer
    with pytest.raises(FileNotFoundError, match="no run canonical/nope"):
        select_runs(results, {"canonical": "nope"})


def test_a_run_is_named_by_directory_experiment_directory_or_id():
    by_dir = find_run(FIXTURE, str(FIXTURE / "canonical" / CANONICAL))
    assert find_run(FIXTURE, str(FIXTURE / "canonical")) == by_dir
    assert find_run(FIXTURE, CANONICAL) == by_dir
    with pytest.raises(FileNotFoundError, match="no run 'nope'"):
        find_run(FIXTURE, "nope")


def test_an_experiment_directory_gives_its_newest_complete_run_unless_asked(tmp_path):
    experiment = tmp_path / "canonical"
    shutil.copytree(FIXTURE / "canonical" / CANONICAL, experiment / CANONICAL)
    newer = experiment / "20261122T000000Z-aaaaaa"
    shutil.copytree(FIXTURE / "canonical" / CANONICAL, newer)
    (newer / "run.json").write_text(json.dumps({"status": "abandoned"}))
    assert find_run(tmp_path, str(experiment)).run_id == CANONICAL
    assert find_run(tmp_path, str(experiment), include_incomplete=True).path == newer
    assert find_run(tmp_path, str(newer)).status == "abandoned"  # named: whatever its status
    shutil.rmtree(experiment / CANONICAL)
    with pytest.raises(FileNotFoundError, match=r"no complete run \(1 incomplete\) under"):
        find_run(tmp_path, str(experiment))


def test_a_rewritten_config_is_read_again(tmp_path):
    """The task is parsed once per config content (the cache of read_run), never kept stale."""
    from icelab.core.runs import read_run

    run = tmp_path / "runs" / "smoke" / "20261128T000000Z-aaaaaa"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("experiment:\n  task: planning\n")
    assert read_run(run).task == "planning"
    (run / "config.yaml").write_text("experiment:\n  task: canonical_queries\n")
    assert read_run(run).task == "canonical_queries"
