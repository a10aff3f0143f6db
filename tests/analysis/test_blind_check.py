"""The blind check's scoring (icelab.analysis.blind_check): a cell's value is the median of its run
medians over enough runs and sittings, predicted from its own model inputs by the registered
calibration, and the criterion's three figures (no Spark: synthetic runs with planted costs)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from icelab.analysis import blind_check, calibration
from icelab.analysis.calibration import Where
from icelab.core.provenance import REPO, git
from icelab.core.runs import Run, read_run
from tests.analysis.test_calibration import made
from tests.analysis.test_planning_model import THREADS, synthetic

LOCAL = Where.of("local", "local")
# The commit synthetic runs name: this checkout's, which holds the registration.
HEAD = git(REPO, "rev-parse", "HEAD") or "0" * 40


def env(commit: str | None = HEAD, dirty: bool = False) -> str:
    """A run's env.json: the driver's cores and the commit it measured."""
    return json.dumps({"machine": {"cores": THREADS}, "git": {"commit": commit, "dirty": dirty}})


def held_run(
    root: Path,
    run_id: str,
    sitting: str | None,
    seed: int,
    slower: float = 1.0,
    commit: str | None = HEAD,
    narrow: str | None = None,
) -> Run:
    """A synthetic held-out run (planted costs, its own noise; Iceberg planning `slower` times the
    planted one) with model_inputs.csv as icelab.experiments.model_inputs writes it. The state
    `narrow` (a dataset label) has entries of a sixth of the bytes (its planted cost the same)."""
    frame, states, windows = synthetic(seed=seed)
    iceberg = frame["format"] == "iceberg"
    frame.loc[iceberg, "planning_ms"] *= slower
    run_dir = root / "runs" / "costmodel_check" / run_id
    run_dir.mkdir(parents=True)
    frame.to_parquet(run_dir / "measurements.parquet", index=False)
    matched = (
        frame[iceberg]
        .groupby(["dataset", "profile", "window"])["files_scanned"]
        .first()
        .rename("entries_matched")
    )
    inputs = windows.merge(matched.reset_index(), on=["dataset", "profile", "window"])
    small = inputs["dataset"] == narrow
    inputs.loc[small, "manifest_bytes_read"] = (inputs.loc[small, "manifest_bytes_read"] / 6).round()
    inputs.to_csv(run_dir / blind_check.INPUTS_FILE, index=False)
    states.to_csv(run_dir / blind_check.STATES_FILE, index=False)
    (run_dir / "run.json").write_text(json.dumps({"status": "complete"}))
    (run_dir / "env.json").write_text(env(commit))
    experiment = {"task": "metadata_scale", **({"sitting": sitting} if sitting else {})}
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"experiment": experiment}))
    found = read_run(run_dir)
    assert found is not None
    return found


@pytest.fixture(scope="module")
def model(tmp_path_factory):  # noqa: ANN201
    """The Iceberg local fit of a calibration made from a synthetic run of the same planted costs."""
    root = tmp_path_factory.mktemp("calibration")
    return calibration.iceberg_fit(calibration.read(made(root, LOCAL)), "local")


def runs(root: Path, sittings: list[str | None], slower: float = 1.0, commit: str | None = HEAD) -> list[Run]:
    return [
        held_run(root, f"2026112{i}T000000Z-abcde{i}", s, seed=11 + i, slower=slower, commit=commit)
        for i, s in enumerate(sittings)
    ]


def test_a_cell_is_the_median_of_its_run_medians_with_runs_and_sittings_counted(tmp_path):
    found = runs(tmp_path, ["a", "a", "b"])
    table = blind_check.measured(found)
    per_run = pd.concat([blind_check.run_cells(r) for r in found])
    cell = table.iloc[0]
    mine = per_run[(per_run[blind_check.KEYS] == cell[blind_check.KEYS]).all(axis=1)]
    assert len(mine) == 3 and cell["planning_ms"] == mine["planning_ms"].median()
    assert (table["runs"] == 3).all() and (table["sittings"] == 2).all() and table["complete"].all()


def test_the_planted_model_passes_and_a_slower_table_fails_on_bias(tmp_path, model):
    good = blind_check.verdict(
        blind_check.predicted(blind_check.measured(runs(tmp_path, ["a", "b", "b"])), model)
    )
    assert good.passed and good.incomplete == 0 and good.cells > 0
    assert good.share_within >= blind_check.SHARE_WITHIN and abs(good.median_signed_error) <= 0.05
    # Planning 40% slower than the model was fitted on: biased low by about 29%, beyond the bar.
    slow = blind_check.predicted(blind_check.measured(runs(tmp_path / "slow", ["a", "b", "b"], 1.4)), model)
    bad = blind_check.verdict(slow)
    assert not bad.passed and not bad.holds["no_bias"] and bad.median_signed_error < -0.2


def test_too_few_runs_or_sittings_leave_every_cell_unscored(tmp_path, model):
    one_sitting = blind_check.measured(runs(tmp_path / "one", ["a", "a", "a"]))
    assert (one_sitting["sittings"] == 1).all() and not one_sitting["complete"].any()
    two_runs = blind_check.measured(runs(tmp_path / "two", ["a", "b"]))
    assert not two_runs["complete"].any()
    found = blind_check.verdict(blind_check.predicted(two_runs, model))
    assert found.cells == 0 and found.incomplete == len(two_runs) and not found.passed


def test_the_runs_of_one_commit_are_kept_and_the_others_named(tmp_path):
    ours = runs(tmp_path / "ours", ["a", "b", "b"])
    other = held_run(tmp_path / "other", "20261125T000000Z-fffff1", "c", seed=3, commit="f" * 40)
    changed = held_run(tmp_path / "changed", "20261126T000000Z-fffff2", "c", seed=4)
    (changed.path / "env.json").write_text(env(dirty=True))
    changed = read_run(changed.path)
    commit, kept, left = blind_check.of_one_commit([*ours, other, changed])
    assert commit == HEAD and kept == ours and left == [other, changed]
    assert blind_check.run_commit(changed) is None
    named, kept, left = blind_check.of_one_commit([*ours, other], "ffff")
    assert named == "f" * 40 and kept == [other] and left == ours


def test_the_criterion_per_state_size_shows_where_the_errors_are(tmp_path, model):
    found = runs(tmp_path, ["a", "b", "b"])
    sizes = blind_check.state_sizes(found)
    assert sizes == {"meta_200k-aaaa": 200_000, "meta_1m-bbbb": 1_000_000, "meta_10m-cccc": 10_000_000}
    scored = blind_check.predicted(blind_check.measured(found), model)
    # The largest state measured twice as slow as planted: its cells alone are biased low by half.
    largest = scored["dataset"] == "meta_10m-cccc"
    scored.loc[largest, "planning_ms"] *= 2
    per_size = blind_check.by_size(scored, sizes)
    assert [n for n, _ in per_size] == [200_000, 1_000_000, 10_000_000]
    assert sum(v.cells for _, v in per_size) == blind_check.verdict(scored).cells
    assert [v.holds["no_bias"] for _, v in per_size] == [True, True, False]
    assert per_size[-1][1].median_signed_error < -0.4
    # A state no states.csv names is left out, not guessed.
    assert [n for n, _ in blind_check.by_size(scored, {"meta_1m-bbbb": 1_000_000})] == [1_000_000]


def test_a_sitting_without_a_label_is_the_runs_date(tmp_path):
    found = runs(tmp_path, [None, "later"])
    assert [blind_check.sitting(r) for r in found] == ["20261120", "later"]


def test_runs_that_read_different_inputs_are_refused(tmp_path):
    found = runs(tmp_path, ["a", "b"])
    path = found[1].path / blind_check.INPUTS_FILE
    inputs = pd.read_csv(path)
    inputs.loc[0, "manifests_read"] += 1
    inputs.to_csv(path, index=False)
    with pytest.raises(ValueError, match="different model inputs"):
        blind_check.measured(found)


def test_a_run_without_model_inputs_is_named(tmp_path):
    found = runs(tmp_path, ["a"])
    (found[0].path / blind_check.INPUTS_FILE).unlink()
    with pytest.raises(ValueError, match="no model_inputs.csv"):
        blind_check.measured(found)


def catalogue_run(root: Path, run_id: str, sitting: str, slower: float) -> Run:
    """A doctor_catalogue run whose catalogue.json measured two windows of one shape (one more
    window without a time) and none of another."""
    run_dir = root / "runs" / "doctor_catalogue" / run_id
    run_dir.mkdir(parents=True)
    inputs = {
        "manifests_read": 12,
        "entries_read": 600,
        "largest_manifest_entries": 50,
        "entries_matched": 20,
        "manifest_bytes_read": 600 * 278,
    }
    now = [
        {"window": "1d", **inputs, "predicted_ms": 30.0, "measured_ms": 40.0 * slower, "measured_plans": 5},
        {
            "window": "7d",
            **inputs,
            "entries_matched": 140,
            "predicted_ms": 60.0,
            "measured_ms": 42.0 * slower,
            "measured_plans": 5,
        },
        {"window": "30d", **inputs, "predicted_ms": 30.0, "measured_ms": None, "measured_plans": 0},
    ]
    shapes = [
        {"shape": "fragmented", "writer": "spark-sql", "now": now},
        {"shape": "unpartitioned", "writer": "spark-sql", "now": []},
    ]
    (run_dir / "catalogue.json").write_text(json.dumps({"tiny": False, "shapes": shapes, "problems": []}))
    (run_dir / "run.json").write_text(json.dumps({"status": "complete"}))
    (run_dir / "env.json").write_text(env())
    experiment = {"task": "doctor_catalogue", "sitting": sitting}
    (run_dir / "config.yaml").write_text(yaml.safe_dump({"experiment": experiment}))
    found = read_run(run_dir)
    assert found is not None
    return found


def test_foreign_tables_are_the_windows_measured_on_each_shape_as_written(tmp_path):
    found = [
        catalogue_run(tmp_path, f"2026112{i}T000000Z-abcde{i}", s, slower)
        for i, (s, slower) in enumerate([("a", 1.0), ("b", 1.5), ("b", 1.2)])
    ]
    table = blind_check.combined(pd.concat([blind_check.catalogue_cells(r) for r in found]))
    assert list(table["window"]) == ["1d", "7d"] and set(table["dataset"]) == {"fragmented"}
    assert table["layout"].eq("as written (spark-sql)").all() and table["complete"].all()
    assert table.set_index("window")["planning_ms"].to_dict() == {"1d": 48.0, "7d": 42.0 * 1.2}
    assert (table["threads"] == THREADS).all() and (table["entries_matched"] == [20, 140]).all()
    # The doctor's own prediction, judged by the same figures: 30 against 48 ms (-37.5%), 60 against
    # 50.4 ms (+19%); its interval is not stored, so no coverage.
    table["covered"] = True
    doctor = blind_check.verdict(table, "doctor_ms")
    assert doctor.cells == 2 and doctor.share_within == 0.5 and doctor.max_abs_error == pytest.approx(0.375)
    assert (
        doctor.median_signed_error == pytest.approx((-0.375 + 60 / 50.4 - 1) / 2)
        and doctor.coverage != doctor.coverage
    )
