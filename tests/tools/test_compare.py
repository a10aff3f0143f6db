"""The run comparison flags exactly the significant, large changes; says when it cannot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icelab.analysis.rows import counted
from icelab.core.contract import read_measurements
from icelab.core.runs import read_run
from icelab.tools.compare import (
    IMPROVEMENT,
    MISSING,
    NO_CHANGE,
    REGRESSION,
    TOO_FEW,
    compare,
    differences,
    main,
    min_p,
    reps_needed,
)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"
BASE = [100.0, 103.0, 97.0, 101.0, 99.0, 102.0]


def frame(scale: dict[str, float] | None = None, reps: int = 6, warm: float = 1e6) -> pd.DataFrame:
    """Queries q1..q4, one variant and window; planning = BASE x the query's scale, execution
    = 10x planning; one warm-up round far off, which must never count."""
    scale = scale or {}
    rows = []
    for query in ("q1", "q2", "q3", "q4"):
        for rep in range(-1, reps):
            planning = warm if rep < 0 else BASE[rep] * scale.get(query, 1.0)
            rows.append(
                dict(
                    query_id=query,
                    variant="iceberg/optimized",
                    window="1d",
                    repetition=rep,
                    warmup=rep < 0,
                    status="ok",
                    planning_ms=planning,
                    execution_ms=10 * planning,
                    total_ms=11 * planning,
                )
            )
    return pd.DataFrame(rows)


def flagged(table: pd.DataFrame) -> set[tuple[str, str, str]]:
    hits = table[table["verdict"].isin([REGRESSION, IMPROVEMENT])]
    return {(r.query_id, r.timing, r.verdict) for r in hits.itertuples()}


def test_a_run_against_itself_flags_nothing():
    table = compare(frame(), frame())
    assert set(table["verdict"]) == {NO_CHANGE}
    assert (table["change"] == 0).all() and (table["p_value"] == 1).all()


def test_a_shifted_distribution_flags_exactly_the_shifted_queries():
    table = compare(frame(), frame({"q2": 1.5, "q3": 0.6}))
    assert flagged(table) == {
        (q, t, v)
        for q, v in (("q2", REGRESSION), ("q3", IMPROVEMENT))
        for t in ("planning_ms", "execution_ms", "total_ms")
    }
    q2 = table[(table["query_id"] == "q2") & (table["timing"] == "planning_ms")].iloc[0]
    assert q2["change"] == pytest.approx(0.5)
    assert q2["p_value"] < 0.05 and q2["n_a"] == q2["n_b"] == 6  # the warm-up is not counted


def test_a_significant_but_small_change_is_not_flagged():
    table = compare(frame(), frame({"q1": 1.05}))  # every value 5% higher: significant, below 10%
    q1 = table[table["query_id"] == "q1"]
    assert (q1["p_value"] < 0.05).all()
    assert set(q1["verdict"]) == {NO_CHANGE}
    assert flagged(compare(frame(), frame({"q1": 1.05}), min_change=0.04)) != set()


def test_too_few_repetitions_is_said_not_hidden():
    assert min_p(3, 3) == pytest.approx(0.1)
    assert min_p(4, 4) == pytest.approx(2 / 70)
    assert reps_needed(0.05) == 4
    table = compare(frame(reps=3), frame({"q2": 3.0}, reps=3))
    assert set(table["verdict"]) == {TOO_FEW}  # even a 3x change: p cannot go below 0.1
    four = compare(frame(reps=4), frame({"q2": 3.0}, reps=4), correction="none")
    assert set(four["verdict"]) == {NO_CHANGE, REGRESSION}
    # 4 vs 4 gives p >= 0.029 at best: over 12 cells the false-discovery correction wants more.
    assert set(compare(frame(reps=4), frame({"q2": 3.0}, reps=4))["verdict"]) == {NO_CHANGE}


def test_the_correction_keeps_chance_from_flagging_unchanged_cells():
    """200 cells, both runs drawn from one distribution: uncorrected, about 5% are 'significant'."""
    rng = np.random.default_rng(7)

    def noise() -> pd.DataFrame:
        values = rng.lognormal(mean=5, sigma=0.3, size=(200, 10))
        return pd.DataFrame(
            dict(
                query_id=f"q{i}",
                variant="v",
                window="1d",
                repetition=r,
                warmup=False,
                status="ok",
                planning_ms=values[i, r],
                execution_ms=None,
                total_ms=None,
            )
            for i in range(200)
            for r in range(10)
        )

    a, b = noise(), noise()
    assert len(flagged(compare(a, b, min_change=0.0, correction="none"))) >= 3
    assert flagged(compare(a, b, min_change=0.0)) == set()


def test_a_case_only_one_run_has_is_missing():
    b = frame()
    table = compare(frame(), b[b["query_id"] != "q4"])
    assert set(table[table["query_id"] == "q4"]["verdict"]) == {MISSING}


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
