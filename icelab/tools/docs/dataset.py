"""Generated blocks of docs/dataset.md, docs/cluster.md and docs/reliability.md.

Two sources: the dataset configs (`conf/dataset/<name>.yaml` over `_base.yaml`, composed as
Hydra does) for what a dataset is meant to be, and the reference runs at medium for what was
stored: the file counts and bytes a full-span window read, the manifests of the as-ingested
table, the manifest spans of `manifest_health`, and how long the measuring runs took. No
datagen run is stored, so build times, throughput and memory appear nowhere here.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from icelab.analysis.stored_run import stored
from icelab.core.runs import Run, find_runs, latest_runs
from icelab.core.units import num, pct, size
from icelab.tools import validate
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.sources import CONF, provenance, reference_run, run_minutes, steady_rows

# The dataset settings that fix the rows and the layout: a stored run counts for a dataset's
# row of the ladder only when its config agrees with conf/ on all of them.
LAYOUT = ["rows", "scale", "span_days", "end", "partitioning", "commits"]
LAYOUT += ["late_fraction", "late_max_days", "clock_skew_fraction"]
PLANNING = "manifest_8mb"  # the reference run whose full-span window reads every file
AS_INGESTED = "as_ingested"


def conf_dir(results: Path) -> Path:
    """The `conf/` beside `results`, or this checkout's when that tree has none (a copy of the docs)."""
    beside = results.parent / "conf"
    return beside if beside.is_dir() else CONF


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merge(merged[key], value) if both else value
    return merged


def dataset_configs(conf: Path) -> dict[str, dict[str, Any]]:
    """Every dataset of `conf/dataset/`, by name: `_base.yaml` with the file's own keys over it."""
    group = conf / "dataset"
    base = yaml.safe_load((group / "_base.yaml").read_text()) or {}
    configs = {}
    for path in sorted(group.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        own = yaml.safe_load(path.read_text()) or {}
        own.pop("defaults", None)
        config = _merge(base, own)
        configs[str(config.get("name") or path.stem)] = config
    return dict(sorted(configs.items(), key=lambda item: total_rows(item[1])))  # smallest first


def total_rows(config: dict[str, Any]) -> int:
    """Rows after scaling (DatasetConfig.total_rows)."""
    return int(round(config["rows"] * config.get("scale", 1.0)))


def _same_layout(stored: dict[str, Any], config: dict[str, Any]) -> bool:
    return all(str(stored.get(key)) == str(config.get(key)) for key in LAYOUT)


def _matches(run: Run | None, name: str, config: dict[str, Any]) -> bool:
    stored = (run.config().get("dataset") or {}) if run else {}
    return stored.get("name") == name and _same_layout(stored, config)


def _summary(run: Run) -> list[dict[str, str]]:
    with (run.path / "summary.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _float(text: str | None) -> float | None:
    return float(text) if text not in (None, "") else None


def full_window(run: Run) -> str | None:
    """The run's shortest window that starts at or before its dataset's first day (None: none does)."""
    dataset = run.config().get("dataset") or {}
    end = dt.date.fromisoformat(str(dataset["end"]))
    first = dt.datetime.combine(end - dt.timedelta(days=int(dataset["span_days"])), dt.time())
    covering = [
        (dt.datetime.fromisoformat(stop) - dt.datetime.fromisoformat(start), name)
        for name, (start, stop) in (run.meta().get("windows") or {}).items()
        if dt.datetime.fromisoformat(start) <= first
    ]
    return min(covering)[1] if covering else None


def whole_table(run: Run) -> dict[str, dict[str, float]]:
    """Per format (`parquet`, `iceberg` as ingested): the files, bytes and partitions a window over
    the whole span read, the largest over the run's queries (one filtering on time alone prunes
    nothing there)."""
    window = full_window(run)
    found: dict[str, dict[str, float]] = {}
    for row in _summary(run):
        fmt = row["format"]
        if row["window"] != window or (fmt == "iceberg" and row["profile"] != AS_INGESTED):
            continue
        files = _float(row["files_scanned"])
        if files is not None and files > found.get(fmt, {}).get("files", -1):
            found[fmt] = {
                "files": files,
                "bytes": _float(row["bytes_scanned"]) or 0.0,
                "partitions": _float(row["partitions_scanned"]) or 0.0,
            }
    return found


def _as_ingested(run: Run) -> dict[str, Any]:
    return (run.meta().get("variants") or {}).get(f"iceberg/{AS_INGESTED}") or {}


def manifest_span(results: Path) -> tuple[Run, float] | None:
    """The reference `manifest_health` run and the median share of day partitions one as-ingested
    manifest's bounds cover (None when no such run is stored)."""
    run = latest_runs(find_runs(results / "reference")).get("manifest_health")
    if run is None:
        return None
    for state in json.loads((run.path / "report.json").read_text()):
        if state.get("state") == AS_INGESTED:
            return run, float(state["stats"]["span"]["median"])
    return None


def ladder(results: Path) -> str:
    """The scale ladder: each dataset's rows, days and commits from conf/, and what the reference
    runs stored of its tables (files, bytes, manifests, manifest span)."""
    configs = dataset_configs(conf_dir(results))
    planning = reference_run(results, PLANNING)
    health = manifest_span(results)
    rows = []
    for name, config in configs.items():
        stored = whole_table(planning) if _matches(planning, name, config) else {}
        pq, ice = stored.get("parquet", {}), stored.get("iceberg", {})
        manifests = _as_ingested(planning) if stored else {}
        span = health[1] if health and _matches(health[0], name, config) else None
        rows.append(
            [
                name,
                num(total_rows(config)),
                num(config["span_days"]),
                num(config["commits"]),
                num(pq.get("files")),
                size(pq.get("bytes")),
                num(ice.get("files")),
                size(ice.get("bytes")),
                f"{num(manifests['manifests'])} ({size(manifests['manifest_bytes'])})" if manifests else "-",
                pct(span),
            ]
        )
    header = ["dataset", "rows", "days", "commits", "Parquet files", "Parquet", "Iceberg files", "Iceberg"]
    return render(
        "dataset/ladder.md.j2",
        table=table([*header, "manifests", "median manifest span"], rows),
        window=full_window(planning),
        planning=PLANNING,
        provenance=provenance(planning),
        health=health and provenance(health[0]),
    )


def arrival(results: Path) -> str:
    """The arrival model and key skew of each dataset, from conf/."""
    rows = []
    for name, config in dataset_configs(conf_dir(results)).items():
        k = float(config["popularity_skew"])
        rows.append(
            [
                name,
                f"`{config['partitioning']}`",
                pct(config["late_fraction"]),
                f"{num(config['late_max_days'])} days",
                pct(config["clock_skew_fraction"]),
                num(k, 1),
                pct(0.1 ** (1 / k)),  # P(u**k < 0.1) for index = n * u**k
            ]
        )
    header = ["dataset", "partitioning", "late tail", "late lag up to", "clock skew", "k"]
    return render("dataset/arrival.md.j2", table=table([*header, "top 10% of keys get"], rows))


def schema_width(results: Path) -> str:
    """The leaf fields of the widest read of the canonical reference run, on Iceberg."""
    run = reference_run(results, "canonical")
    m = stored(run).measurements()
    ice = m[(m["format"] == "iceberg") & m["read_leaves"].notna()]
    widest = None if ice.empty else ice.loc[ice["read_leaves"].idxmax()]
    return render("dataset/schema_width.md.j2", widest=widest, provenance=provenance(run))


def file_count(results: Path) -> str:
    """Files per day partition of the stored medium tables: what sets the build's cost."""
    planning = reference_run(results, PLANNING)
    pq = whole_table(planning).get("parquet")
    return render(
        "dataset/file_count.md.j2",
        parquet=pq if pq and pq["partitions"] else None,
        planning=PLANNING,
        dataset=_dataset(planning),
        window=full_window(planning),
        provenance=provenance(planning),
    )


def _seconds(ms: str | None) -> float | None:
    value = _float(ms)
    return None if value is None else value / 1000


def _dataset(run: Run) -> str:
    return str((run.config().get("dataset") or {}).get("name", "?"))


def bigger_machine(results: Path) -> str:
    """Where the measuring runs at medium spend their time, from the reference runs."""
    planning = reference_run(results, PLANNING)
    canonical = reference_run(results, "canonical")
    m = stored(planning).measurements()
    window = full_window(planning)
    rows = {
        (r["format"], r["profile"]): r
        for r in _summary(planning)
        if r["window"] == window and r["query_id"] == "count_window"
    }
    ice, pq = rows.get(("iceberg", AS_INGESTED)), rows.get(("parquet", "none"))
    c = stored(canonical).measurements()
    meta = canonical.meta()
    executed = c[c["executed"] & ~c["warmup"]]
    # Executed warm-ups: whole rounds, or the steady-state phase's executions per case (numbered
    # below the warm-up rounds' repetitions).
    steady = steady_rows(c, meta["protocol"]["warmups"])
    warm = c[c["executed"] & c["warmup"] & ~steady]
    per_round, per_warmup = executed["repetition"].nunique() or 1, warm["repetition"].nunique() or 1
    return render(
        "dataset/bigger_machine.md.j2",
        machine={k: (planning.env().get("machine") or {}).get(k) for k in ("cores", "memory_gib")},
        planning={
            "experiment": PLANNING,
            "dataset": _dataset(planning),
            "provenance": provenance(planning),
            "minutes": run_minutes(planning),
            "execution_s": m["execution_ms"].sum() / 1000,
            "planning_s": m["planning_ms"].sum() / 1000,
            "executed_rounds": m.loc[m["executed"] & ~m["warmup"], "repetition"].nunique(),
            "rounds": m["repetition"].nunique(),
            "window": window,
            "count_window": ice
            and pq
            and {
                "files": _float(ice["files_scanned"]),
                "iceberg_s": _seconds(ice["execution_ms_median"]),
                "parquet_s": _seconds(pq["execution_ms_median"]),
                "n": _float(ice["execution_ms_n"]),
            },
        },
        canonical={
            "dataset": _dataset(canonical),
            "provenance": provenance(canonical),
            "minutes": run_minutes(canonical),
            "queries": len(meta.get("queries") or {}),
            "variants": len(meta.get("variants") or {}),
            "round_min": executed["total_ms"].sum() / 60000 / per_round,
            "execution_min": executed["execution_ms"].sum() / 60000 / per_round,
            "steady_min": c.loc[steady, "total_ms"].sum() / 60000 if steady.any() else None,
            "warmup_min": warm["total_ms"].sum() / 60000 / per_warmup if len(warm) else None,
        },
    )


def validate_reference(results: Path) -> str:
    """`icelab validate results/reference --all` over the committed reference set, as printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        validate.main([str(results / "reference"), "--all"])
    text = out.getvalue().replace(str(results / "reference"), "results/reference")
    return render("dataset/validate.md.j2", output=text)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "dataset-ladder": ladder,
    "dataset-schema": schema_width,
    "dataset-arrival": arrival,
    "dataset-file-count": file_count,
    "dataset-bigger-machine": bigger_machine,
    "dataset-validate": validate_reference,
}
