"""The reference set takes complete runs' small files only, then redraws its charts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.tools.reference import MAX_BYTES, main

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "results"
RUN = "20261121T124651Z-24369b"


@pytest.fixture
def run(tmp_path) -> Path:
    path = tmp_path / "runs" / "snapshot_expiry" / RUN
    shutil.copytree(FIXTURE / "snapshot_expiry" / RUN, path)
    (path / "measurements.partial.jsonl").write_text("{}\n")
    (path / "expiry.png").write_bytes(b"\x89PNG")
    return path


def test_small_files_are_copied_and_charts_drawn(run, tmp_path, capsys):
    dest = tmp_path / "reference"
    assert main([str(run), "--dest", str(dest)]) == 0
    copied = sorted(p.name for p in (dest / "snapshot_expiry" / RUN).iterdir())
    assert copied == ["config.yaml", "env.json", "expiry.json", "timeline.parquet"]
    assert (dest / "charts" / "snapshot_expiry" / "expiry.svg").is_file()
    assert f"reference: {dest / 'snapshot_expiry' / RUN} (4 files" in capsys.readouterr().out


def test_a_large_file_refuses_the_run(run, tmp_path, capsys):
    (run / "summary.csv").write_bytes(b"x" * (MAX_BYTES + 1))
    dest = tmp_path / "reference"
    assert main([str(run), "--dest", str(dest), "--no-charts"]) == 1
    assert "summary.csv (2.0 MB)" in capsys.readouterr().err
    assert not dest.exists()


def test_an_incomplete_run_is_refused(tmp_path, capsys):
    path = tmp_path / "canonical" / "20261122T000000Z-aaaaaa"
    shutil.copytree(FIXTURE / "canonical" / "20261121T134249Z-cce90f", path)
    (path / "run.json").write_text(json.dumps({"status": "interrupted"}))
    assert main([str(path), "--dest", str(tmp_path / "reference"), "--no-charts"]) == 1
    assert "run status is 'interrupted', not 'complete'" in capsys.readouterr().err


def test_a_datagen_run_keeps_its_build_summary(tmp_path, capsys):
    # The stored builds table (docs/dataset.md) reads each build's summary.json.
    stored = REPO / "results" / "reference" / "datagen" / "tiny-arrow" / "datagen"
    source = sorted(stored.iterdir())[0]
    run = tmp_path / "runs" / "datagen" / source.name
    shutil.copytree(source, run)
    (run / "spark.log").write_text("a log the reference does not keep\n")
    dest = tmp_path / "reference" / "datagen" / "tiny-arrow"
    assert main([str(run), "--dest", str(dest), "--no-charts"]) == 0
    copied = sorted(p.name for p in (dest / "datagen" / source.name).iterdir())
    assert copied == ["config.yaml", "env.json", "run.json", "summary.json"]
