"""The Figure 10 tutorial's generated blocks (icelab.tools.docs.tutorials), from the stored runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.tools.docs.tutorials import FRESH_SET, figure10_fresh

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_fresh_run_block_quotes_the_runs_effect_line():
    text = figure10_fresh(RESULTS)
    assert "the study's effect: shown. At 180d: iceberg/as_ingested plans in" in text
    assert "the `effect` dataset's build and verification" in text


def _copy_of_the_fresh_run(tmp_path: Path) -> Path:
    source = next((RESULTS / "reference" / FRESH_SET / "manifest_8mb").iterdir())
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


def test_a_run_without_the_effect_says_not_shown(tmp_path: Path):
    run = _copy_of_the_fresh_run(tmp_path)
    summary = (run / "summary.csv").read_text().splitlines()
    # The rewrite's planning quadrupled: it no longer plans faster than the table as ingested.
    header = summary[0].split(",")
    at = header.index("planning_ms_median")
    rows = []
    for line in summary[1:]:
        cells = line.split(",")
        if "rewrite_8mb" in cells[header.index("variant")]:
            cells[at] = str(float(cells[at]) * 4)
        rows.append(",".join(cells))
    (run / "summary.csv").write_text("\n".join([summary[0], *rows]) + "\n")
    assert "the study's effect: not shown." in figure10_fresh(tmp_path)
