"""`icelab validate <results>` checks every run in both layouts and names the broken ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.core.runs import find_runs
from icelab.tools.validate import main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"
CANONICAL = FIXTURE / "canonical" / "20261121T134249Z-cce90f"
HEALTH = FIXTURE / "manifest_health" / "20261121T124318Z-c9f1a0"


@pytest.fixture
def results(tmp_path) -> Path:
    """The fixture runs as a reference set, plus one broken run of each kind under runs/."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results / "reference")
    runs = results / "runs"
    failed = runs / "canonical" / "20261122T000001Z-aaaaa1"
    shutil.copytree(CANONICAL, failed)
    meta = json.loads((failed / "run.json").read_text())
    (failed / "run.json").write_text(json.dumps(meta | {"status": "failed"}))
    torn = runs / "canonical" / "20261122T000002Z-aaaaa2"
    shutil.copytree(CANONICAL, torn)
    (torn / "run.json").write_text('{"status": "comp')
    (runs / "verify" / "20261122T000003Z-aaaaa3").mkdir(parents=True)  # died before writing anything
    lacking = runs / "manifest_health" / "20261122T000004Z-aaaaa4"
    shutil.copytree(HEALTH, lacking)
    (lacking / "manifests.parquet").unlink()
    (lacking / "report.json").unlink()
    datagen = runs / "datagen" / "20261122T000005Z-aaaaa5"
    datagen.mkdir(parents=True)
    (datagen / "config.yaml").write_text("experiment:\n  task: datagen\n")
    (datagen / "env.json").write_text("{}")
    torn_json = runs / "snapshot_expiry" / "20261122T000006Z-aaaaa6"
    shutil.copytree(FIXTURE / "snapshot_expiry" / "20261121T124651Z-24369b", torn_json)
    (torn_json / "expiry.json").write_text('{"rows": 1')
    return results


def test_every_broken_run_is_named_with_why(results, capsys):
    assert main([str(results)]) == 1
    out = capsys.readouterr().out
    broken = {line.split()[1].rstrip(":"): line for line in out.splitlines() if line.startswith("broken")}
    assert set(broken) == {
        "runs/canonical/20261122T000001Z-aaaaa1",
        "runs/canonical/20261122T000002Z-aaaaa2",
        "runs/verify/20261122T000003Z-aaaaa3",
        "runs/manifest_health/20261122T000004Z-aaaaa4",
        "runs/datagen/20261122T000005Z-aaaaa5",
        "runs/snapshot_expiry/20261122T000006Z-aaaaa6",
    }
    assert "run status is 'failed', not 'complete'" in broken["runs/canonical/20261122T000001Z-aaaaa1"]
    assert (
        "unreadable run.json or config.yaml: JSONDecodeError"
        in broken["runs/canonical/20261122T000002Z-aaaaa2"]
    )
    assert "the run stopped as it started" in broken["runs/verify/20261122T000003Z-aaaaa3"]
    assert (
        "missing report.json, manifests.parquet; run status is 'unknown'"
        in broken["runs/manifest_health/20261122T000004Z-aaaaa4"]
    )
    assert "missing summary.json" in broken["runs/datagen/20261122T000005Z-aaaaa5"]
    assert "unreadable expiry.json: JSONDecodeError" in broken["runs/snapshot_expiry/20261122T000006Z-aaaaa6"]
    assert out.splitlines()[-1] == (
        f"validate: 12 runs under {results}: 6 valid (3 under an older contract), 6 broken"
    )


def test_valid_runs_pass_and_older_ones_are_named(capsys):
    assert main([str(FIXTURE), "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "ok      manifest_health/20261121T124318Z-c9f1a0" in lines
    older = {line.split()[1].rstrip(":"): line for line in lines if line.startswith("older")}
    s3 = (
        "s3_requests, s3_list_requests, s3_head_requests, s3_get_requests, s3_retries, s3_request_ms, "
        "s3_longest_ms, proxy_longest_ms, gc_ms, pause_ms, task_stall_ms, faults, faulted"
    )
    # The canonical run predates only the retakes and the request counts; the manifest_8mb runs
    # the plan facts too.
    assert older.pop("canonical/20261121T134249Z-cce90f").endswith(f"columns retake, {s3}")
    assert set(older) == {"manifest_8mb/20261121T114058Z-ef97e6", "manifest_8mb/20261121T114416Z-ac7555"}
    assert all(f"setup, retake, {s3}, pushed_filters" in line for line in older.values())
    assert lines[-1] == f"validate: 6 runs under {FIXTURE}: 6 valid (3 under an older contract), 0 broken"


def test_readers_skip_an_unreadable_run_instead_of_failing(results):
    runs = {r.run_id: r for r in find_runs(results)}
    assert runs["20261122T000002Z-aaaaa2"].status == "unreadable"
    assert not runs["20261122T000002Z-aaaaa2"].complete


def test_nothing_to_validate_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"icelab: error: no run directories under {tmp_path}\n"


def test_one_run_directory_is_checked_itself(results, capsys):
    """`icelab validate <run dir>` checks that run (it used to say there were no runs under it)."""
    good = results / "reference" / "canonical" / "20261121T134249Z-cce90f"
    assert main([str(good), "--all"]) == 0
    # valid (the fixture predates the S3 columns, so "older", as in the whole-set check above)
    assert capsys.readouterr().out.splitlines()[0].startswith(f"older   {good}: valid;")
    failed = results / "runs" / "canonical" / "20261122T000001Z-aaaaa1"
    assert main([str(failed)]) == 1
    assert f"broken  {failed}: run status is 'failed', not 'complete'" in capsys.readouterr().out
