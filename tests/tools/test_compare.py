"""`icelab compare`: what differs between runs named, stored runs compared, sessions pooled,
variants of one run paired, and a bad name one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from icelab.analysis.rows import counted
from icelab.core.contract import read_measurements
from icelab.core.runs import read_run
from icelab.tools.compare import differences, main

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"


def _run(path: Path, dataset: str, commit: str, vectorized: bool) -> Path:
    path.mkdir(parents=True)
    env = {"dataset": {"name": dataset, "hash": "abc"}, "git": {"commit": commit, "dirty": False}}
    (path / "env.json").write_text(json.dumps(env))
    (path / "config.yaml").write_text(
        f"paths:\n  results_dir: {path}\nsetup:\n  optimized:\n    vectorized: {str(vectorized).lower()}\n"
    )
    (path / "run.json").write_text(json.dumps({"status": "complete"}))
    return path


def test_differences_name_the_dataset_commit_and_config_keys(tmp_path):
    a = read_run(_run(tmp_path / "canonical" / "a", "medium", "1" * 40, True))
    b = read_run(_run(tmp_path / "canonical" / "b", "small", "2" * 40, False))
    notes = differences(a, b)
    assert "datasets differ: medium-abc vs small-abc" in notes
    assert "git commits differ: 1111111 vs 2222222" in notes
    # paths.* differ too, but say nothing about what was measured.
    assert notes[-1] == "configs differ in 1 keys: setup.optimized.vectorized: True -> False"
    assert differences(a, a) == []


def test_the_command_on_a_stored_run_against_itself(tmp_path, capsys):
    out = tmp_path / "cmp.csv"
    run = FIXTURE / "manifest_8mb" / "20261121T114416Z-ac7555"
    assert main([str(run), "20261121T114416Z-ac7555", "--results", str(FIXTURE), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "verdicts: 0 regression, 0 improvement, 36 no change, 72 too few repetitions" in printed
    assert "2 vs 2: p >= 0.333" in printed  # the two executed rounds cannot reach alpha
    assert len(pd.read_csv(out)) == 108


def test_an_unknown_run_is_one_line(capsys):
    assert main(["nope", "nope", "--results", str(FIXTURE)]) == 2
    assert capsys.readouterr().err.startswith("icelab: error: no run 'nope'")


def test_the_command_pools_sessions_per_side(tmp_path, capsys):
    run = "20261121T114416Z-ac7555"
    out = tmp_path / "cmp.csv"
    args = [f"{run},{run}", str(FIXTURE / "manifest_8mb" / run), "--results", str(FIXTURE), "--out", str(out)]
    assert main([*args, "--forest", str(tmp_path / "forest.png"), "--timing", "planning_ms"]) == 0
    printed = capsys.readouterr().out
    assert "every one of 2 session pair(s) agrees" in printed
    assert "effects: 0 slower, 0 faster, 0 not recurring" in printed
    assert (tmp_path / "forest.png").is_file() and (tmp_path / "forest.svg").is_file()
    table = pd.read_csv(out)
    pooled = table[table["timing"] == "planning_ms"]
    assert (pooled["n_a"] == 2 * pooled["n_b"]).all()  # side a: the same run twice, pooled


def test_two_variants_of_one_run_meet_cell_by_cell(tmp_path, capsys):
    """An A/B in one session: the canonical run's interleaved initial and optimized."""
    run = FIXTURE / "canonical" / "20261121T134249Z-cce90f"
    out = tmp_path / "ab.csv"
    args = [str(run), str(run), "--out", str(out), "--variants", "iceberg/initial", "iceberg/optimized"]
    assert main(args) == 0
    table = pd.read_csv(out)
    m = counted(read_measurements(run))
    assert set(table["variant"]) == {"iceberg/initial -> iceberg/optimized"}
    assert len(table) == 23 * 3  # every query, each timing
    q = table[(table["query_id"] == "q16_region_join_month") & (table["timing"] == "planning_ms")].iloc[0]
    cell = m[m["query_id"] == "q16_region_join_month"].groupby("variant")["planning_ms"].median()
    assert (q["median_a"], q["median_b"]) == (cell["iceberg/initial"], cell["iceberg/optimized"])
    # The same run on both sides: the variants were measured in the same rounds, so paired.
    assert set(table["estimator"]) == {"paired"}
    assert "per-round ratios b / a (paired" in capsys.readouterr().out
    two = FIXTURE / "canonical" / "20261121T134249Z-cce90f"
    other = tmp_path / "other"
    shutil.copytree(two, other)
    assert (
        main([str(run), str(other), "--out", str(out), "--variants", "iceberg/initial", "iceberg/optimized"])
        == 0
    )
    assert set(pd.read_csv(out)["estimator"]) == {"independent"}
    assert main([*args[:4], "--variants", "iceberg/initial", "iceberg/nope"]) == 2
    assert "no variant 'iceberg/nope' in a compared run (it has: parquet, iceberg/initial" in (
        capsys.readouterr().err
    )
