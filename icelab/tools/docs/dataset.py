"""Blocks of docs/dataset.md, cluster.md and reliability.md: from conf/dataset/, the medium reference
runs and the stored builds under `results/reference/datagen/`."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from icelab.analysis import dataset_reads
from icelab.analysis.stored_run import stored
from icelab.core.runs import find_runs, latest_runs
from icelab.tools import validate
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import CONF, provenance, reference_run, run_minutes, steady_rows

PLANNING = "manifest_8mb"  # the reference run whose full-span window reads every file


def conf_dir(results: Path) -> Path:
    """The `conf/` beside `results`, or this checkout's when that tree has none (a copy of the docs)."""
    beside = results.parent / "conf"
    return beside if beside.is_dir() else CONF


def dataset_configs(conf: Path) -> dict[str, dict[str, Any]]:
    """Every dataset of `conf/dataset/` by name, smallest first: `_base.yaml` under its own keys."""
    base = OmegaConf.load(conf / "dataset" / "_base.yaml")
    configs = {}
    for path in sorted((conf / "dataset").glob("[!_]*.yaml")):
        own = OmegaConf.load(path)
        own.pop("defaults", None)
        config = OmegaConf.to_container(OmegaConf.merge(base, own))
        configs[str(config.get("name") or path.stem)] = config
    return dict(sorted(configs.items(), key=lambda item: dataset_reads.total_rows(item[1])))


def ladder(results: Path) -> str:
    """Each dataset's rows, days and commits from conf/, and what the reference runs stored of it."""
    planning = reference_run(results, PLANNING)
    health = latest_runs(find_runs(results / "reference")).get("manifest_health")
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


def validate_reference(results: Path) -> str:
    """The last line of `icelab validate results/reference --all` over the committed reference set."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        validate.main([str(results / "reference"), "--all"])
    last = out.getvalue().strip().splitlines()[-1].replace(str(results / "reference"), "results/reference")
    return render("dataset/validate.md.j2", output=last)


def bigger_machine(results: Path) -> str:
    """Where the measuring runs at medium spend their time, from the reference runs."""
    planning, canonical = reference_run(results, PLANNING), reference_run(results, "canonical")
    steady = steady_rows(stored(canonical).measurements(), canonical.meta()["protocol"]["warmups"])
    about = {
        r: dict(dataset=dataset_reads.dataset_name(r), provenance=provenance(r), minutes=run_minutes(r))
        for r in (planning, canonical)
    }
    return render(
        "dataset/bigger_machine.md.j2",
        machine={k: (planning.env().get("machine") or {}).get(k) for k in ("cores", "memory_gib")},
        planning={"experiment": PLANNING, **about[planning], **dataset_reads.planning_time(planning)},
        canonical={**about[canonical], **dataset_reads.canonical_time(canonical, steady)},
    )


BUILDS = "datagen"


def builds(results: Path) -> dict[str, dict[str, Any]]:
    """Each stored build case (`results/reference/datagen/<case>/datagen/<run>`, a reference set per
    case), by name, cases in name order: its newest build's `summary.json` and figures from it."""
    found, cases = {}, sorted(p for p in (results / "reference" / BUILDS).glob("*") if p.is_dir())
    for run in [r for case in cases for r in find_runs(case)]:
        if run.experiment == BUILDS and (run.path / "summary.json").is_file():
            summary = json.loads((run.path / "summary.json").read_text())
            info, kind = summary["dataset"], (run.config().get("storage") or {}).get("kind", "local")
            c = {"case": run.path.parents[1].name, "run": run.run_id, "info": info, "b": summary.get("bound")}
            c.update(
                dataset=f"{info['name']}-{info['hash']}", store=kind != "local", wall=info["build_wall_s"]
            )
            c["bytes"] = info["summary"]["parquet"]["bytes"] + info["summary"]["iceberg"]["bytes"]
            c["verify"] = sum(v for k, v in info["profile_s"].items() if k.startswith("verify"))
            found[c["case"]] = {**c, "provenance": provenance(run)}
    return found


def bounds(results: Path) -> str:
    """Each stored build that measured its bound (`icelab.datagen.bound`), and its wall time over it."""
    return render("dataset/bound.md.j2", rows=[c for c in builds(results).values() if c["b"]])


DICTIONARY_CASES = ("dict-all", "dict-rule")  # one size, one sitting: pyarrow's default, parquet-mr's rule


def dictionaries(results: Path) -> str:
    """The stored pairs of builds of one size per `DICTIONARY_CASES` (`icelab.datagen.dictionaries`)."""
    found = builds(results)
    sizes = sorted({case.partition("-")[0] for case in found})
    sizes = [s for s in sizes if {f"{s}-{k}" for k in DICTIONARY_CASES} <= found.keys()]
    pairs = [(s, {k: found[f"{s}-{k}"] for k in DICTIONARY_CASES}) for s in sizes]
    return render("dataset/dictionaries.md.j2", pairs=pairs, kinds=DICTIONARY_CASES)


def store_builds(results: Path) -> str:
    """Each store build `<case>-store` over the local `<case>` build; the newest's S3A requests by phase."""
    found, pairs, newest = builds(results), [], {}
    for case, c in found.items():
        local = found.get(case.removesuffix("-store"))
        if c["store"] and local and not local["store"] and local["dataset"] == c["dataset"]:
            pairs.append({**c, "local": local["wall"], "ratio": c["wall"] / local["wall"]})
            if c["info"].get("s3a_requests") and c["run"] > newest.get(c["info"]["name"], {"run": ""})["run"]:
                newest[c["info"]["name"]] = pairs[-1]
    return render("dataset/store_requests.md.j2", pairs=pairs, rows=list(newest.values()))


BLOCKS: dict[str, Callable[[Path], str]] = {
    "dataset-ladder": ladder,
    "dataset-schema": schema_width,
    "dataset-arrival": arrival,
    "dataset-validate": validate_reference,
    "dataset-bigger-machine": bigger_machine,
    "dataset-bound": bounds,
    "dataset-dictionaries": dictionaries,
    "dataset-store-requests": store_builds,
}
