"""icelab.tools.docs.prerequisites: each dataset's disk and build time are its newest build
stored on local disk, and every stored medium run is listed under its dataset's builder (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

from icelab.core.runs import find_runs
from icelab.tools.docs.prerequisites import builders, figure10_needs, needs

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_each_dataset_is_its_newest_build_on_local_disk() -> None:
    rows = {r["name"]: r for r in needs(RESULTS)}
    assert list(rows) == ["tiny", "effect", "small", "medium"]
    runs = [r for c in (RESULTS / "reference" / "datagen").glob("effect*") for r in find_runs(c)]
    local = [r for r in runs if r.config()["storage"]["kind"] == "local"]
    assert len(local) < len(runs)  # the store's builds are stored too, and left out
    run = max(local, key=lambda r: r.run_id)
    built = json.loads((run.path / "summary.json").read_text())["dataset"]
    assert rows["effect"]["run"] == run.run_id
    summary = built["summary"]
    assert rows["effect"]["bytes"] == summary["parquet"]["bytes"] + summary["iceberg"]["bytes"]
    assert rows["small"]["run"] is None and rows["small"]["bytes"] is None
    assert f"`effect-{built['hash']}`, stored build `{run.run_id}`" in figure10_needs(RESULTS)


def test_every_stored_medium_run_is_listed_once_under_its_builder() -> None:
    rows = builders(RESULTS)
    listed = [p for r in rows for p in r["runs"]]
    assert len(listed) == len(set(listed))
    medium = [
        p.parent.relative_to(RESULTS / "reference").as_posix()
        for p in (RESULTS / "reference").rglob("config.yaml")
        if "\n  name: medium\n" in p.read_text() and (p.parent / "env.json").is_file()
    ]
    assert sorted(listed) == sorted(medium)
    by = {r["dataset"]: r["builder"] for r in rows}
    assert by["medium-729b88797efb"] == "arrow" and by["medium-45e49c86fc89"] == "spark"
