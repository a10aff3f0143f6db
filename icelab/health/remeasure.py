"""An independent re-measure of a rewrite, in a fresh process: the check of the doctor's measured
saving (docs/decision-check-7.md).

The doctor measures its "after" on a scratch copy in its own Spark session, after the JIT and the
page cache have warmed to that table. This measures the same rewrite again in a new JVM: a fresh
scratch copy of the table (`scratch.open_copy`, under `<results>/doctor-scratch`), rewritten by the
statements the doctor ran on its copy (none ran: Iceberg's `rewrite_manifests` at its defaults),
then the table and the copy planned in interleaved rounds until steady (`measured.measure_states`),
the same windows the doctor planned. Snapshot expiry is not run: it changes no plan of the
current snapshot. Nothing of the doctor's session is reused but its window bounds.

    python -m icelab.health.remeasure RUN_DIR/config.yaml JOBS.json OUT.json

JOBS.json is a list of jobs (`job`); OUT.json gets one row per job, in order (`remeasure`).
Exit status: 0 when every job was measured or said why not, 2 for bad input.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from pyspark.sql import SparkSession

from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.health.anchor import MIN_PLANS
from icelab.health.measured import WARMUPS, measure_states, state_of
from icelab.health.reader import read
from icelab.health.scratch import DIRECTORY, open_copy, sweep
from icelab.health.source import connect, load, resolve

# The doctor's statements that shape the layout; expiry is left out (see the module's docstring).
LAYOUT = ("set_target", "rewrite_manifests", "restore_target")
NOT_MEASURED = ("measured_ms", "measured_range_ms", "measured_plans", "manifests_scanned", "steady")


def job(
    shape: str, table: str, windows: list[dict[str, Any]], ran: list[dict[str, Any]], copy: str | None
) -> dict[str, Any]:
    """One table to re-measure: where it is, the windows (name and bounds) the doctor planned, the
    layout statements it ran on its copy (`ran`, `advice.run_statements` rows) and that copy's
    catalog, which they name."""
    return {
        "shape": shape,
        "table": table,
        "windows": [{k: w[k] for k in ("window", "start_us", "end_us")} for w in windows if "start_us" in w],
        "statements": [
            {"text": r["text"], "language": r.get("language", "sql")} for r in ran if r["action"] in LAYOUT
        ],
        "doctor_catalog": copy.split(".", 1)[0] if copy else None,
    }


def _statements(given: dict[str, Any], name: str) -> list[dict[str, str]]:
    """The doctor's layout statements on this copy (its catalog in place of the doctor's copy's;
    the copy's namespace and name are the same), or Iceberg's rewrite at its defaults."""
    catalog, ident = name.split(".", 1)
    if given["statements"] and given["doctor_catalog"]:
        return [
            s | {"text": s["text"].replace(given["doctor_catalog"], catalog)} for s in given["statements"]
        ]
    return [{"text": f"CALL {catalog}.system.rewrite_manifests(table => '{ident}')", "language": "sql"}]


def _run(spark: SparkSession, statement: dict[str, str]) -> None:
    if statement["language"] == "sql":
        spark.sql(statement["text"]).collect()
    else:
        exec(statement["text"], {"spark": spark})  # the doctor's PySpark line, as it ran there


def _cell(w: dict[str, Any]) -> dict[str, Any]:
    return {k: w.get(k) for k in NOT_MEASURED}


def remeasure(
    spark: SparkSession,
    engine: EngineConfig,
    given: dict[str, Any],
    base: Path,
    plans: int,
    warmups: int = WARMUPS,
) -> dict[str, Any]:
    """Copy, rewrite and plan one job's table beside its copy until steady; its row: per window the
    median plan before and after with their intervals, how the rounds stopped, the statements run
    and the seconds each step took. The copy is removed at the end."""
    t0 = time.perf_counter()
    source = connect(spark, engine, resolve(given["table"]))
    jtable = load(spark, source)
    meta = read(spark, source, jtable, jar_name=engine.iceberg_jar)
    seconds = {"read": round(time.perf_counter() - t0, 3)}
    t0 = time.perf_counter()
    scratch = open_copy(spark, engine, source, jtable, meta.metadata_file or "", base)
    try:
        texts = _statements(given, scratch.source.name or "")
        for statement in texts:
            _run(spark, statement)
        seconds["rewrite"] = round(time.perf_counter() - t0, 3)
        jcopy = load(spark, scratch.source)
        after_meta = read(spark, scratch.source, jcopy, jar_name=engine.iceberg_jar)
        now = [dict(w) for w in given["windows"]]
        after = [dict(w) for w in given["windows"]]
        states = [
            state_of(spark, "now", source, meta, now),
            state_of(spark, "after", scratch.source, after_meta, after),
        ]
        rounds = measure_states(
            spark,
            [s for s in states if s is not None],
            plans,
            warmups=warmups,
            until_steady=plans >= MIN_PLANS,
        )
        seconds["planning_rounds"] = rounds.pop("seconds", 0.0)
    finally:
        scratch.remove()
    return {
        "shape": given["shape"],
        "table": given["table"],
        "statements": [s["text"] for s in texts],
        "manifests": {"now": len(meta.manifests), "after": len(after_meta.manifests)},
        "windows": [
            {"window": n["window"], "now": _cell(n), "after": _cell(a)}
            for n, a in zip(now, after, strict=True)
        ],
        "rounds": rounds,
        "seconds": seconds,
    }


def run_jobs(
    spark: SparkSession, engine: EngineConfig, jobs: list[dict[str, Any]], results: Path, plans: int
) -> list[dict[str, Any]]:
    """Every job re-measured in turn (`remeasure`); a job that fails is a row with its error."""
    base = results / DIRECTORY
    sweep(base)
    rows = []
    for given in jobs:
        try:
            rows.append(remeasure(spark, engine, given, base, plans))
        except Exception as exc:  # one table's failure never loses the others' rows
            rows.append(
                {"shape": given["shape"], "table": given["table"], "error": f"{type(exc).__name__}: {exc}"}
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Re-measure the jobs of JOBS.json in this fresh process, with the run's config; write OUT.json."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3:
        print("usage: python -m icelab.health.remeasure CONFIG.yaml JOBS.json OUT.json", file=sys.stderr)
        return 2
    config, jobs_file, out = (Path(a) for a in args)
    # Imported here: the context starts Spark, which the module's users in a session never need.
    from icelab.bench.context import open_context
    from icelab.core.config import catalogue_config

    try:
        if not config.is_file() or not jobs_file.is_file():
            raise UserError(f"no such file: {config if not config.is_file() else jobs_file}")
        cfg = OmegaConf.load(config)
        jobs = json.loads(jobs_file.read_text())
        ctx = open_context(cfg, data=False)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    try:
        t0 = time.perf_counter()
        plans = catalogue_config(cfg).measure_plans
        rows = run_jobs(ctx.spark, ctx.engine, jobs, Path(ctx.paths.results_dir), plans)
        app = ctx.spark.sparkContext.applicationId
        write_json(
            out,
            {"application": app, "plans": plans, "seconds": round(time.perf_counter() - t0, 1), "rows": rows},
        )
    finally:
        ctx.spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
