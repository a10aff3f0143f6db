"""What a dataset needs, per size: docs/prerequisites.md's table and the Figure 10 tutorial's line.

Rows and the builder come from `conf/dataset/`; the memory set aside from `conf/` (the Spark
driver's `engine.driver_memory`, DuckDB's `verify.duckdb_memory`, which verification runs beside
it); disk and build time from the newest build of each dataset name stored on local disk
(`results/reference/datagen/<case>/`: its `summary.json`, Parquet and Iceberg bytes together).
Setup and test times come from the newest stored CI run (`results/reference/ci/`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from icelab.analysis import dataset_reads
from icelab.core.runs import read_run
from icelab.tools.docs.dataset import conf_dir, dataset_configs, stored_builds
from icelab.tools.docs.markdown import render


def memory(conf: Path) -> dict[str, str]:
    """The memory a run sets aside: the local engine's driver and DuckDB's verification reads."""
    engine = OmegaConf.load(conf / "engine" / "local.yaml")
    verify = OmegaConf.load(conf / "config.yaml").get("verify") or {}
    return {"driver": str(engine.driver_memory), "duckdb": str(verify.get("duckdb_memory"))}


def needs(results: Path) -> list[dict[str, Any]]:
    """Per dataset of conf/, smallest first: rows, builder, and its newest stored build's disk,
    build wall time, hash and run (None where no build of that name is stored on local disk)."""
    newest: dict[str, tuple[Any, dict[str, Any]]] = {}
    for _, run, summary in stored_builds(results):
        if (run.config().get("storage") or {}).get("kind", "local") != "local":
            continue  # a build on the store: its disk is the store's, its time the store's too
        name = summary["dataset"]["name"]
        if name not in newest or run.run_id > newest[name][0].run_id:
            newest[name] = (run, summary["dataset"])
    rows = []
    for name, config in dataset_configs(conf_dir(results)).items():
        run, built = newest.get(name, (None, None))
        found = built["summary"] if built else None
        rows.append(
            {
                "name": name,
                "rows": dataset_reads.total_rows(config),
                "builder": config.get("builder"),
                "bytes": found["parquet"]["bytes"] + found["iceberg"]["bytes"] if found else None,
                "build_s": built.get("build_wall_s") if built else None,
                "dataset": f"{name}-{built['hash']}" if built else None,
                "run": run.run_id if run else None,
            }
        )
    return rows


def builders(results: Path, name: str = "medium") -> list[dict[str, Any]]:
    """Every dataset hash of `name` the reference set holds runs of, with its builder (a config
    without the key predates the choice: Spark's) and those runs' directories, newest hash first."""
    found: dict[str, dict[str, Any]] = {}
    for env in sorted((results / "reference").rglob("env.json")):
        run = read_run(env.parent)
        dataset = (run.config().get("dataset") or {}) if run else {}
        if dataset.get("name") != name:
            continue
        digest = f"{name}-{run.env()['dataset']['hash']}"
        builder = dataset.get("builder", "spark")
        row = found.setdefault(digest, {"dataset": digest, "builder": builder, "runs": []})
        row["runs"].append(env.parent.relative_to(results / "reference").as_posix())
    return sorted(found.values(), key=lambda r: max(Path(p).name for p in r["runs"]), reverse=True)


def medium_builders(results: Path) -> str:
    """docs/dataset.md's list: which stored medium runs are of which builder."""
    default = dataset_configs(conf_dir(results))["medium"].get("builder")
    return render("prerequisites/builders.md.j2", rows=builders(results), default=default)


def datasets(results: Path) -> str:
    """docs/prerequisites.md's table: what each dataset size needs."""
    return render("prerequisites/datasets.md.j2", rows=needs(results), memory=memory(conf_dir(results)))


def figure10_needs(results: Path) -> str:
    """The Figure 10 tutorial's line: what its default dataset, `effect`, needs."""
    row = next(r for r in needs(results) if r["name"] == "effect")
    return render("prerequisites/figure10.md.j2", row=row, memory=memory(conf_dir(results)))


def ci_times(results: Path) -> str:
    """docs/prerequisites.md's setup and test times: the newest `.ci/run` stored under
    results/reference/ci (`icelab.tools.ci_times`).

    Raises:
        LookupError: when none is stored.
    """
    found = sorted((results / "reference" / "ci").glob("*/ci.json"))
    if not found:
        raise LookupError(f"no CI record under {results / 'reference' / 'ci'}")
    newest = found[-1]
    path = f"results/{newest.relative_to(results).as_posix()}"
    return render("prerequisites/ci.md.j2", ci=json.loads(newest.read_text()), path=path)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "prerequisites-datasets": datasets,
    "prerequisites-ci": ci_times,
    "tutorial-figure10-needs": figure10_needs,
    "dataset-medium-builders": medium_builders,
}
