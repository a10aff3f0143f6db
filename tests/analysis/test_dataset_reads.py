"""A stored run counts for a dataset only when it measured it as configured, and the window over
the whole span is the shortest that starts at or before the dataset's first day."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from icelab.analysis.dataset_reads import full_window, matches
from icelab.core.runs import Run, read_run

DATASET = {"name": "medium", "rows": 10, "span_days": 10, "end": "2026-06-30", "commits": 4}


def _run(tmp_path: Path, windows: dict[str, list[str]]) -> Run:
    path = tmp_path / "manifest_8mb" / "20260101T000000Z-000000"
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(yaml.safe_dump({"dataset": DATASET}))
    (path / "run.json").write_text(json.dumps({"windows": windows}))
    return read_run(path)


def test_the_full_window_is_the_shortest_covering_the_first_day(tmp_path):
    run = _run(
        tmp_path,
        {
            "1d": ["2026-06-29T00:00:00", "2026-06-30T00:00:00"],
            "10d": ["2026-06-20T00:00:00", "2026-06-30T00:00:00"],
            "30d": ["2026-05-31T00:00:00", "2026-06-30T00:00:00"],
        },
    )
    assert full_window(run) == "10d"


def test_no_window_reaching_the_first_day_is_none(tmp_path):
    assert full_window(_run(tmp_path, {"1d": ["2026-06-29T00:00:00", "2026-06-30T00:00:00"]})) is None


def test_a_run_counts_only_for_the_dataset_as_configured(tmp_path):
    run = _run(tmp_path, {})
    assert matches(run, "medium", dict(DATASET))
    assert not matches(run, "medium", {**DATASET, "commits": 5})
    assert not matches(run, "small", dict(DATASET))
    assert not matches(None, "medium", dict(DATASET))
