"""The dataset page's generated figures follow their sources: conf/dataset/ and the reference runs."""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
import yaml

from icelab.tools.docs import dataset

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A checkout holding copies of conf/dataset/ and of the reference runs the blocks read."""
    shutil.copytree(REPO / "conf" / "dataset", tmp_path / "conf" / "dataset")
    for experiment in ("manifest_8mb", "manifest_health", "canonical"):
        shutil.copytree(
            REPO / "results" / "reference" / experiment, tmp_path / "results" / "reference" / experiment
        )
    return tmp_path


def _row(text: str, name: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def _edit_yaml(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))


def _run(root: Path, experiment: str) -> Path:
    """The experiment's newest stored run, the one the blocks read."""
    return sorted((root / "results" / "reference" / experiment).iterdir())[-1]


def test_the_ladder_follows_the_dataset_config(root: Path) -> None:
    results = root / "results"
    assert _row(dataset.ladder(results), "small")[1:4] == ["1,000,000", "180", "50"]
    _edit_yaml(root / "conf" / "dataset" / "small.yaml", rows=3_000_000, commits=70, scale=0.5)
    assert _row(dataset.ladder(results), "small")[1:4] == ["1,500,000", "180", "70"]


def test_the_ladder_follows_the_stored_run(root: Path) -> None:
    results = root / "results"
    medium = _row(dataset.ladder(results), "medium")
    assert medium[4] == "35,913" and medium[8] == "200 (25.5 MB)"
    summary = _run(root, "manifest_8mb") / "summary.csv"
    with summary.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row["format"] == "parquet" and row["window"] == "180d":
            row["files_scanned"] = "40000.0"
    with summary.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert _row(dataset.ladder(results), "medium")[4] == "40,000"


def test_a_stored_run_of_another_config_is_not_claimed(root: Path) -> None:
    _edit_yaml(root / "conf" / "dataset" / "medium.yaml", commits=300)
    medium = _row(dataset.ladder(root / "results"), "medium")
    assert medium[3] == "300"
    assert medium[4:] == ["-"] * 6


def test_the_key_share_follows_popularity_skew(root: Path) -> None:
    assert _row(dataset.arrival(root / "results"), "tiny")[-1] == "46%"
    _edit_yaml(root / "conf" / "dataset" / "tiny.yaml", popularity_skew=1.0)
    assert _row(dataset.arrival(root / "results"), "tiny")[-1] == "10%"


def test_the_run_times_follow_run_json(root: Path) -> None:
    run_json = _run(root, "canonical") / "run.json"
    meta = json.loads(run_json.read_text())
    start = dt.datetime.fromisoformat(meta.get("process_started_utc") or meta["started_utc"])
    end = dt.datetime.fromisoformat(meta["finished_utc"])
    minutes = (end - start).total_seconds() / 60
    assert f"`canonical` at medium, run `{meta['run_id']}`" in dataset.bigger_machine(root / "results")
    assert f": {minutes:.1f} min;" in dataset.bigger_machine(root / "results")
    meta["finished_utc"] = (end + dt.timedelta(minutes=30)).isoformat()
    run_json.write_text(json.dumps(meta))
    assert f": {minutes + 30:.1f} min;" in dataset.bigger_machine(root / "results")


def test_a_build_on_the_store_is_set_over_the_local_build_of_its_name(tmp_path: Path):
    builds = tmp_path / "results" / "reference" / "datagen"
    shutil.copytree(REPO / "results" / "reference" / "datagen" / "medium-arrow", builds / "medium-arrow")
    assert dataset.store_builds(tmp_path / "results").startswith("No build on a store")
    # The same build stored again as a store build that took 1.75 times as long.
    shutil.copytree(builds / "medium-arrow", builds / "medium-arrow-store")
    (run,) = (builds / "medium-arrow-store" / "datagen").iterdir()
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["storage"]["kind"] = "object"
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    summary = json.loads((run / "summary.json").read_text())
    summary["dataset"]["build_wall_s"] *= 1.75
    (run / "summary.json").write_text(json.dumps(summary))
    assert "**1.75 to 1.75 times** the wall time" in dataset.store_builds(tmp_path / "results")
    # Another local build of the dataset under another name: the store build stays beside its
    # namesake, the build of its own sitting.
    shutil.copytree(builds / "medium-arrow", builds / "medium-arrow-z")
    (again,) = (builds / "medium-arrow-z" / "datagen").iterdir()
    later = json.loads((again / "summary.json").read_text())
    later["dataset"]["build_wall_s"] *= 2
    (again / "summary.json").write_text(json.dumps(later))
    assert "**1.75 to 1.75 times** the wall time" in dataset.store_builds(tmp_path / "results")
    # A store build of another dataset than its namesake's is set beside nothing.
    summary["dataset"]["hash"] = "000000000000"
    (run / "summary.json").write_text(json.dumps(summary))
    assert dataset.store_builds(tmp_path / "results").startswith("No build on a store")


def _bound_runs(results: Path) -> list[Path]:
    runs = (results / "reference" / "datagen").glob("*/datagen/*")
    return [r for r in runs if json.loads((r / "summary.json").read_text()).get("bound")]


def test_each_stored_bound_is_shown_with_the_builds_wall_time_over_it(tmp_path: Path):
    shutil.copytree(
        REPO / "results" / "reference" / "datagen", tmp_path / "results" / "reference" / "datagen"
    )
    results = tmp_path / "results"
    runs = _bound_runs(results)
    assert runs, "a stored build measured its bound"
    run = runs[0]
    summary = json.loads((run / "summary.json").read_text())
    b, wall = summary["bound"], summary["dataset"]["build_wall_s"]
    row = _row(dataset.bounds(results), f"`{run.parents[1].name}`")
    assert row[2:5] == [f"**{b['bound_s']:,.1f} s**", f"{wall:,.1f} s", f"**{wall / b['bound_s']:.1f}x**"]
    assert row[6] == f"{300 / b['bound_s']:.2f}"
    # A build twice as slow is twice as far from the same bound.
    summary["dataset"]["build_wall_s"] = 2 * wall
    (run / "summary.json").write_text(json.dumps(summary))
    row = _row(dataset.bounds(results), f"`{run.parents[1].name}`")
    assert row[4] == f"**{2 * wall / b['bound_s']:.1f}x**"


def test_builds_without_a_bound_are_not_shown(tmp_path: Path):
    shutil.copytree(
        REPO / "results" / "reference" / "datagen", tmp_path / "results" / "reference" / "datagen"
    )
    for run in _bound_runs(tmp_path / "results"):
        summary = json.loads((run / "summary.json").read_text())
        summary["bound"] = None
        (run / "summary.json").write_text(json.dumps(summary))
    assert dataset.bounds(tmp_path / "results").startswith("No build with its bound is stored")


def test_a_files_pages_through_the_codec_are_set_against_its_cost_where_they_were_measured(tmp_path: Path):
    shutil.copytree(
        REPO / "results" / "reference" / "datagen", tmp_path / "results" / "reference" / "datagen"
    )
    results = tmp_path / "results"
    runs = [
        r
        for r in _bound_runs(results)
        if "pages_per_file" in json.loads((r / "summary.json").read_text())["bound"]["floors"]
    ]
    assert runs, "a stored bound timed the codec's calls"
    run = runs[0]
    summary = json.loads((run / "summary.json").read_text())
    f, case = summary["bound"]["floors"], f"`{run.parents[1].name}`"
    share = 100 * f["pages_per_file"] * f["compress_call_us"] / 1000 / f["write_file_ms"]
    assert _row(dataset.bounds(results), case)[5] == f"{share:.0f}%"
    # Twice the calls a file: twice the share.
    f["pages_per_file"] *= 2
    (run / "summary.json").write_text(json.dumps(summary))
    assert _row(dataset.bounds(results), case)[5] == f"{2 * share:.0f}%"
    # A bound stored before the codec was timed: a dash.
    del f["pages_per_file"]
    (run / "summary.json").write_text(json.dumps(summary))
    assert _row(dataset.bounds(results), case)[5] == "-"


def test_a_pair_of_dictionary_builds_is_set_side_by_side(tmp_path: Path):
    builds = tmp_path / "results" / "reference" / "datagen"
    for kind in dataset.DICTIONARY_CASES:
        shutil.copytree(
            REPO / "results" / "reference" / "datagen" / f"medium-{kind}", builds / f"medium-{kind}"
        )
    results = tmp_path / "results"

    def stored(kind: str) -> dict:
        (run,) = (builds / f"medium-{kind}" / "datagen").iterdir()
        return json.loads((run / "summary.json").read_text())["dataset"]

    def mb(info: dict) -> float:
        return (info["summary"]["parquet"]["bytes"] + info["summary"]["iceberg"]["bytes"]) / 1e6

    every, rule = stored("dict-all"), stored("dict-rule")
    text = dataset.dictionaries(results)
    assert f"the files take {100 * (1 - mb(rule) / mb(every)):.1f}% fewer bytes" in text
    assert f"takes {rule['build_wall_s'] / every['build_wall_s']:.2f} times as long" in text
    assert _row(text, "`medium-dict-rule`")[1] == "parquet-mr's rule"
    # Half of a pair is no pair.
    shutil.rmtree(builds / "medium-dict-all")
    assert dataset.dictionaries(results).startswith("No pair of builds")


def test_a_store_builds_requests_are_set_out_by_phase(tmp_path: Path):
    builds = tmp_path / "results" / "reference" / "datagen"
    results = tmp_path / "results"
    for case in ("effect-4", "effect-4-store"):
        shutil.copytree(REPO / "results" / "reference" / "datagen" / case, builds / case)
    (run,) = (builds / "effect-4-store" / "datagen").iterdir()
    summary = json.loads((run / "summary.json").read_text())
    phases, commits = summary["dataset"]["s3a_requests"], summary["dataset"]["config"]["commits"]
    row = _row(dataset.store_builds(results), "`effect-4-store`")
    assert row[2].startswith(f"{phases['ingest']['requests']:,}: ")
    assert row[2].endswith(f"; {phases['ingest']['requests'] / commits:.1f} a commit")
    parquet = phases["verify spark/parquet"]
    assert f"{parquet['requests']:,} ({parquet['head'] / parquet['get']:.2f} HEAD a GET)" in row[4]
    # Twice the HEADs in Spark's Parquet reading: twice the HEADs a GET.
    parquet["head"] *= 2
    (run / "summary.json").write_text(json.dumps(summary))
    row = _row(dataset.store_builds(results), "`effect-4-store`")
    assert f"({parquet['head'] / parquet['get']:.2f} HEAD a GET)" in row[4]
    # A store build without requests recorded: its wall time over the local one's, no table.
    del summary["dataset"]["s3a_requests"]
    (run / "summary.json").write_text(json.dumps(summary))
    text = dataset.store_builds(results)
    assert "times** the wall time" in text and "`effect-4-store`" not in text
