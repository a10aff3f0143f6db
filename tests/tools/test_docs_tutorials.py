"""The Figure 10 tutorial's generated blocks (icelab.tools.docs.tutorials), from the stored runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.tools.docs.tutorials import FRESH_LISTED, FRESH_SET, figure10_fresh, fresh_runs

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_fresh_run_block_quotes_the_runs_effect_line():
    text = figure10_fresh(RESULTS)
    assert "the study's effect: shown. At 180d: iceberg/as_ingested plans in" in text
    assert "the `effect` dataset's build and verification" in text


def _copy_of_the_fresh_run(tmp_path: Path, source: Path | None = None) -> Path:
    source = source or next((RESULTS / "reference" / FRESH_SET / "manifest_8mb").iterdir())
    run = tmp_path / "reference" / FRESH_SET / "manifest_8mb" / source.name
    shutil.copytree(source, run)
    return run


def test_a_run_that_reused_its_dataset_is_refused(tmp_path: Path):
    run = _copy_of_the_fresh_run(tmp_path)
    env = json.loads((run / "env.json").read_text())
    env["dataset"]["created_utc"] = "2026-01-01T00:00:00+00:00"  # built before the run began
    (run / "env.json").write_text(json.dumps(env))
    with pytest.raises(LookupError, match="did not build its dataset"):
        figure10_fresh(tmp_path)


def _slow_the_rewrite(run: Path) -> None:
    """The rewrite's planning quadrupled: it no longer plans faster than the table as ingested."""
    summary = (run / "summary.csv").read_text().splitlines()
    header = summary[0].split(",")
    at = header.index("planning_ms_median")
    rows = []
    for line in summary[1:]:
        cells = line.split(",")
        if "rewrite_8mb" in cells[header.index("variant")]:
            cells[at] = str(float(cells[at]) * 4)
        rows.append(",".join(cells))
    (run / "summary.csv").write_text("\n".join([summary[0], *rows]) + "\n")


def test_a_run_without_the_effect_says_not_shown(tmp_path: Path):
    _slow_the_rewrite(_copy_of_the_fresh_run(tmp_path))
    assert "the study's effect: not shown." in figure10_fresh(tmp_path)


def test_the_fresh_runs_table_has_the_newest_runs_that_built_their_dataset_with_their_verdict(tmp_path: Path):
    stored = sorted((RESULTS / "reference" / FRESH_SET / "manifest_8mb").iterdir())
    text = fresh_runs(RESULTS)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [run.name for run in stored[-FRESH_LISTED:]]
    assert f"The newest {FRESH_LISTED} of the {len(stored)} default runs" in text
    # One run reused its dataset, one lost its effect: the first leaves the table, the second says so.
    reused, slowed = (_copy_of_the_fresh_run(tmp_path, run) for run in stored[:2])
    env = json.loads((reused / "env.json").read_text())
    env["dataset"]["created_utc"] = "2026-01-01T00:00:00+00:00"
    (reused / "env.json").write_text(json.dumps(env))
    _slow_the_rewrite(slowed)
    (row,) = [line for line in fresh_runs(tmp_path).splitlines() if line.startswith("| `")]
    assert row.startswith(f"| `{slowed.name}` |") and "| not shown |" in row
