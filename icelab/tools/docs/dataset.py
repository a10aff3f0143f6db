"""Generated blocks of docs/dataset.md, docs/cluster.md and docs/reliability.md.

Two sources: the dataset configs (`conf/dataset/<name>.yaml` over `_base.yaml`, composed as
Hydra does) for what a dataset is meant to be, and the reference runs at medium for what was
stored: the file counts and bytes a full-span window read, the manifests of the as-ingested
table, the manifest spans of `manifest_health`, and how long the measuring runs took. No
datagen run is stored, so build times, throughput and memory appear nowhere here.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from icelab.analysis import dataset_reads
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run, find_runs, latest_runs
from icelab.tools import validate
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import CONF, provenance, reference_run, run_minutes, steady_rows

PLANNING = "manifest_8mb"  # the reference run whose full-span window reads every file


def conf_dir(results: Path) -> Path:
    """The `conf/` beside `results`, or this checkout's when that tree has none (a copy of the docs)."""
    beside = results.parent / "conf"
    return beside if beside.is_dir() else CONF


def dataset_configs(conf: Path) -> dict[str, dict[str, Any]]:
    """Every dataset of `conf/dataset/`, by name, smallest first: `_base.yaml` with the file's own
    keys over it."""
    base = OmegaConf.load(conf / "dataset" / "_base.yaml")
    configs = {}
    for path in sorted((conf / "dataset").glob("[!_]*.yaml")):
        own = OmegaConf.load(path)
        own.pop("defaults", None)
        config = OmegaConf.to_container(OmegaConf.merge(base, own))
        configs[str(config.get("name") or path.stem)] = config
    return dict(sorted(configs.items(), key=lambda item: dataset_reads.total_rows(item[1])))


def _health(results: Path) -> Run | None:
    return latest_runs(find_runs(results / "reference")).get("manifest_health")


def ladder(results: Path) -> str:
    """The scale ladder: each dataset's rows, days and commits from conf/, and what the reference
    runs stored of its tables (files, bytes, manifests, manifest span)."""
    planning, health = reference_run(results, PLANNING), _health(results)
    return render(
        "dataset/ladder.md.j2",
        rows=dataset_reads.ladder(dataset_configs(conf_dir(results)), planning, health),
        window=dataset_reads.full_window(planning),
        planning=PLANNING,
        provenance=provenance(planning),
        health=health and dataset_reads.manifest_span(health) is not None and provenance(health),
    )


def arrival(results: Path) -> str:
    """The arrival model and key skew of each dataset, from conf/."""
    return render("dataset/arrival.md.j2", configs=dataset_configs(conf_dir(results)))


def schema_width(results: Path) -> str:
    """The leaf fields of the widest read of the canonical reference run, on Iceberg."""
    run = reference_run(results, "canonical")
    return render(
        "dataset/schema_width.md.j2", widest=dataset_reads.widest_read(run), provenance=provenance(run)
    )


def file_count(results: Path) -> str:
    """Files per day partition of the stored medium tables: what sets the build's cost."""
    planning = reference_run(results, PLANNING)
    pq = dataset_reads.whole_table(planning).get("parquet")
    return render(
        "dataset/file_count.md.j2",
        parquet=pq if pq and pq["partitions"] else None,
        planning=PLANNING,
        dataset=dataset_reads.dataset_name(planning),
        window=dataset_reads.full_window(planning),
        provenance=provenance(planning),
    )


def validate_reference(results: Path) -> str:
    """`icelab validate results/reference --all` over the committed reference set, as printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        validate.main([str(results / "reference"), "--all"])
    text = out.getvalue().replace(str(results / "reference"), "results/reference")
    return render("dataset/validate.md.j2", output=text)


def bigger_machine(results: Path) -> str:
    """Where the measuring runs at medium spend their time, from the reference runs."""
    planning, canonical = reference_run(results, PLANNING), reference_run(results, "canonical")
    steady = steady_rows(stored(canonical).measurements(), canonical.meta()["protocol"]["warmups"])
    about = {
        run: {
            "dataset": dataset_reads.dataset_name(run),
            "provenance": provenance(run),
            "minutes": run_minutes(run),
        }
        for run in (planning, canonical)
    }
    return render(
        "dataset/bigger_machine.md.j2",
        machine={k: (planning.env().get("machine") or {}).get(k) for k in ("cores", "memory_gib")},
        planning={"experiment": PLANNING, **about[planning], **dataset_reads.planning_time(planning)},
        canonical={**about[canonical], **dataset_reads.canonical_time(canonical, steady)},
    )


# Stored builds, by case: results/reference/datagen/<case>/datagen/<run>, each case a reference
# set of its own (`icelab reference --no-charts --dest results/reference/datagen/<case> <runs>`).
BUILDS = "datagen"


def stored_builds(results: Path) -> Iterator[tuple[str, Run, dict[str, Any]]]:
    """(case, run, its summary.json) for every stored build, cases in name order, each case's
    runs oldest first."""
    root = results / "reference" / BUILDS
    for case in sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for run in find_runs(root / case):
            summary = run.path / "summary.json"
            if run.experiment == BUILDS and summary.is_file():
                yield case, run, json.loads(summary.read_text())


def builds(results: Path) -> str:
    """Each stored build case: its builder and size, the median wall time of its builds (with
    verification) and where that time went (`profile_s`), from the runs' `summary.json`."""
    cases = []
    for case, group in itertools.groupby(stored_builds(results), key=lambda found: found[0]):
        runs, infos = zip(*((run, summary["dataset"]) for _, run, summary in group), strict=True)
        walls = [i["build_wall_s"] for i in infos]
        middle = infos[walls.index(statistics.median_low(walls))]
        cases.append(
            {
                "case": case,
                "builder": middle["config"].get("builder", "spark"),
                "dataset": f"{middle['name']}-{middle['hash']}",
                "rows": middle["summary"]["rows"],
                "files": middle["summary"]["iceberg"]["files"],
                "walls": sorted(walls),
                "median": statistics.median(walls),
                "profile": middle.get("profile_s") or {},
                "writes": middle["ingest"]["seconds"].get("total_s"),
                "verify": sum(
                    v for k, v in (middle.get("profile_s") or {}).items() if k.startswith("verify")
                ),
                "storage": (runs[0].config().get("storage") or {}).get("kind", "local"),
                "provenance": "; ".join(provenance(r) for r in runs),
            }
        )
    # The same dataset built on the store and on local disk: what the store costs the build. A
    # store case `<case>-store` is put beside the local case `<case>` (built in the same sitting),
    # else beside the last local case of its dataset.
    local = {c["dataset"]: c for c in cases if c["storage"] == "local"}
    by_name = {c["case"]: c for c in cases if c["storage"] == "local"}
    on_store = []
    for c in cases:
        namesake = by_name.get(c["case"].removesuffix("-store"))
        beside = namesake if namesake and namesake["dataset"] == c["dataset"] else local.get(c["dataset"])
        if c["storage"] != "local" and beside:
            on_store.append({"store": c, "local": beside, "ratio": c["median"] / beside["median"]})
    return render("dataset/builds.md.j2", cases=cases, on_store=on_store)


def bounds(results: Path) -> str:
    """Each stored build that measured what this machine allows it (`experiment.bound=true`,
    `icelab.datagen.bound`): the bound, its parts and floors, and the build's wall time over it."""
    rows = []
    for case, run, summary in stored_builds(results):
        if summary.get("bound"):
            info, b = summary["dataset"], summary["bound"]
            rows.append(
                {
                    "case": case,
                    "dataset": f"{info['name']}-{info['hash']}",
                    "b": b,
                    "wall": info["build_wall_s"],
                    "ratio": info["build_wall_s"] / b["bound_s"],
                    "provenance": provenance(run),
                }
            )
    return render("dataset/bound.md.j2", rows=rows)


# A pair of stored builds of one size in one sitting: pyarrow's dictionary in every column
# (`<size>-dict-all`, the builder before parquet-mr's rule) and parquet-mr's rule (`<size>-dict-rule`).
DICTIONARY_CASES = ("dict-all", "dict-rule")


def dictionaries(results: Path) -> str:
    """The stored pairs of builds with a dictionary in every column and with parquet-mr's rule
    (`icelab.datagen.dictionaries`): their bytes, build wall time, writes and verifying reads."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for case, run, summary in stored_builds(results):
        size, _, kind = case.partition("-")
        if kind in DICTIONARY_CASES:
            info = summary["dataset"]
            found.setdefault(size, {})[kind] = {
                "case": case,
                "dataset": f"{info['name']}-{info['hash']}",
                "mb": (info["summary"]["parquet"]["bytes"] + info["summary"]["iceberg"]["bytes"]) / 1e6,
                "wall": info["build_wall_s"],
                "writes": info["ingest"]["seconds"]["total_s"],
                "verify": sum(v for k, v in info["profile_s"].items() if k.startswith("verify")),
                "provenance": provenance(run),
            }
    pairs = [(size, kinds) for size, kinds in sorted(found.items()) if set(kinds) == set(DICTIONARY_CASES)]
    runs = [kinds[kind] for _, kinds in pairs for kind in DICTIONARY_CASES]
    sources = "; ".join(f"{c['case']}: {c['provenance']}" for c in runs)
    return render("dataset/dictionaries.md.j2", pairs=pairs, kinds=DICTIONARY_CASES, sources=sources)


def store_requests(results: Path) -> str:
    """Each stored build on a store that records its S3A requests (`icelab.datagen.store_requests`):
    the requests by phase and kind, per commit while ingesting, HEADs a GET in each Spark reading."""
    rows = []
    for case, run, summary in stored_builds(results):
        info = summary["dataset"]
        phases = info.get("s3a_requests")
        if phases:
            readings = {
                k.removeprefix("verify spark/"): v for k, v in phases.items() if k.startswith("verify spark/")
            }
            rows.append(
                {
                    "case": case,
                    "dataset": f"{info['name']}-{info['hash']}",
                    "phases": phases,
                    "commits": info["config"]["commits"],
                    "per_commit": phases["ingest"]["requests"] / info["config"]["commits"],
                    "head_per_get": {name: v["head"] / v["get"] for name, v in readings.items() if v["get"]},
                    "provenance": provenance(run),
                }
            )
    sources = "; ".join(f"{r['case']}: {r['provenance']}" for r in rows)
    return render("dataset/store_requests.md.j2", rows=rows, sources=sources)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "dataset-ladder": ladder,
    "dataset-schema": schema_width,
    "dataset-arrival": arrival,
    "dataset-file-count": file_count,
    "dataset-validate": validate_reference,
    "dataset-bigger-machine": bigger_machine,
    "dataset-builds": builds,
    "dataset-bound": bounds,
    "dataset-dictionaries": dictionaries,
    "dataset-store-requests": store_requests,
}
