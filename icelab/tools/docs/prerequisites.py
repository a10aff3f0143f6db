"""What a dataset needs, per size: docs/prerequisites.md's table and the Figure 10 tutorial's line.

Rows and builder: `conf/dataset/`; memory: `engine.driver_memory` and `verify.duckdb_memory` of
`conf/`; disk and build time: the newest build of each dataset name stored on local disk under
`results/reference/datagen/<case>/`. Setup and test times: the newest `results/reference/ci/` run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from icelab.analysis import dataset_reads
from icelab.core.runs import read_run
from icelab.tools.docs.dataset import builds, conf_dir, dataset_configs
from icelab.tools.docs.markdown import render


def memory(conf: Path) -> dict[str, str]:
    """The memory a run sets aside: the local engine's driver and DuckDB's verification reads."""
    engine = OmegaConf.load(conf / "engine" / "local.yaml")
    verify = OmegaConf.load(conf / "config.yaml").get("verify") or {}
    return {"driver": str(engine.driver_memory), "duckdb": str(verify.get("duckdb_memory"))}


def needs(results: Path) -> list[dict[str, Any]]:
    """Per dataset of conf/, smallest first: rows, builder, and its newest local build's bytes, wall
    time, hash and run (None where none is stored; a store build's disk and time are the store's)."""
    newest = {}
    for c in sorted(builds(results).values(), key=lambda c: c["run"]):
        if not c["store"]:
            newest[c["info"]["name"]] = c
    rows = []
    for name, config in dataset_configs(conf_dir(results)).items():
        built = {k: newest.get(name, {}).get(k) for k in ("bytes", "wall", "dataset", "run")}
        rows.append(
            {"name": name, "rows": dataset_reads.total_rows(config), "builder": config.get("builder")} | built
        )
    return rows


def builders(results: Path, name: str = "medium") -> list[dict[str, Any]]:
    """Every dataset hash of `name` the reference set holds runs of, with its builder (Spark's when
    the config predates the key), its runs' directories and the newest, newest hash first."""
    found: dict[str, dict[str, Any]] = {}
    for env in sorted((results / "reference").rglob("env.json")):
        run = read_run(env.parent)
        dataset = (run.config().get("dataset") or {}) if run else {}
        if dataset.get("name") == name:
            digest = f"{name}-{run.env()['dataset']['hash']}"
            row = found.setdefault(digest, {"dataset": digest, "builder": dataset.get("builder", "spark")})
            row.setdefault("runs", []).append(env.parent.relative_to(results / "reference").as_posix())
    for row in found.values():
        row["newest"] = max(row["runs"], key=lambda p: Path(p).name)
    return sorted(found.values(), key=lambda r: Path(r["newest"]).name, reverse=True)


def medium_builders(results: Path) -> str:
    """docs/dataset.md's list: which stored medium runs are of which builder."""
    return render("prerequisites/builders.md.j2", rows=builders(results))


def datasets(results: Path) -> str:
    """docs/prerequisites.md's table: what each dataset size needs."""
    return render("prerequisites/datasets.md.j2", rows=needs(results), memory=memory(conf_dir(results)))


def figure10_needs(results: Path) -> str:
    """The Figure 10 tutorial's line: what its default dataset, `effect`, needs."""
    row = next(r for r in needs(results) if r["name"] == "effect")
    return render("prerequisites/figure10.md.j2", row=row, memory=memory(conf_dir(results)))


def ci_times(results: Path) -> str:
    """docs/prerequisites.md's setup and test times: the newest `.ci/run` stored under
    results/reference/ci (`icelab.tools.ci_times`). Raises LookupError when none is stored."""
    found = sorted((results / "reference" / "ci").glob("*/ci.json"))
    if not found:
        raise LookupError(f"no CI record under {results / 'reference' / 'ci'}")
    path = f"results/{found[-1].relative_to(results).as_posix()}"
    return render("prerequisites/ci.md.j2", ci=json.loads(found[-1].read_text()), path=path)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "prerequisites-datasets": datasets,
    "prerequisites-ci": ci_times,
    "tutorial-figure10-needs": figure10_needs,
    "dataset-medium-builders": medium_builders,
}
