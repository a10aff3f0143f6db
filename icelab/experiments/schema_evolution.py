"""Task `schema_evolution`: what each schema change does to what readers see, measured.

Each scenario (`experiments/schema_scenarios.py`) gets a fresh Iceberg table in a scratch
catalog under the data directory, written over `commits` commits, and a plain Parquet copy of
the same rows. The scenario's changes are applied through Spark SQL (through Iceberg's Java
API where Spark refuses or cannot express them, said so in the record); a refused change has its
error captured and the schema checked unchanged. Then new rows are written and the followed
column's non-null count is taken over old rows at the current snapshot, at the pre-change
snapshot through time travel, and in the Parquet copy read by name, and over new rows. The
checker (`icelab.schema.rules`) judges the same changes on the table's live state; the run
fails if its verdict and the engine's outcome disagree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig
from pyspark.sql import SparkSession

from icelab.bench.context import open_context
from icelab.charts.schema_table import RECORDS, outcome_table, to_markdown, write_tables
from icelab.core import run_state, storage
from icelab.core.config import SchemaEvolutionConfig, schema_evolution_config
from icelab.core.errors import UserError
from icelab.core.iceberg import current_snapshot_id, load_table
from icelab.core.results import write_parquet
from icelab.core.session import register_iceberg_catalog
from icelab.experiments.schema_scenarios import (
    SCENARIOS,
    Scenario,
    apply_java,
    change_sql,
    create_sql,
    engine_error,
    field_ids,
    has_java_route,
    live_state,
    rows,
)
from icelab.schema.model import Column, parse_type
from icelab.schema.rules import HAZARD, REJECTED, SAFE, check, intended_columns, worst


def pick(names: list[str]) -> list[Scenario]:
    """The scenarios named in config, in that order.

    Raises:
        UserError: naming the known scenarios when one is unknown.
    """
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise UserError(f"unknown scenario '{unknown[0]}' (choose from: {', '.join(sorted(SCENARIOS))})")
    return [SCENARIOS[n] for n in names]


def _schema(spark: SparkSession, table: str) -> tuple[int, list[dict[str, Any]]]:
    return int(load_table(spark, table).schema().schemaId()), field_ids(spark, table)


def apply_change(spark: SparkSession, table: str, change: Any) -> dict[str, Any]:
    """Apply one change; on refusal record the error and whether the schema stayed unchanged."""
    before = _schema(spark, table)
    step: dict[str, Any] = {"change": change.text, "sql": change_sql(table, change), "api": "spark-sql"}
    try:
        spark.sql(step["sql"])
    except Exception as exc:  # the engine's refusal is a result to record, not a crash
        error: dict[str, str] | None = engine_error(exc)
        if has_java_route(change):
            # Spark's analyzer refuses these (or cannot express them) before Iceberg sees them;
            # Iceberg's own UpdateSchema API gives Iceberg's verdict.
            step["sql_error"], step["api"] = error, "iceberg-java"
            try:
                apply_java(spark, table, change)
                error = None
            except Exception as jexc:  # Iceberg's own refusal
                error = engine_error(jexc)
        if error is not None:
            step["error"] = error
            step["schema_unchanged"] = _schema(spark, table) == before
    step["ids_after"] = field_ids(spark, table)
    return step


@contextmanager
def _quiet(spark: SparkSession) -> Iterator[None]:
    """Silence Spark's task-failure logs while a read that may fail by design runs."""
    level = str(spark._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel())
    spark.sparkContext.setLogLevel("OFF")
    try:
        yield
    finally:
        spark.sparkContext.setLogLevel(level)


def _try(spark: SparkSession, sql: str) -> tuple[list[Any] | None, str | None]:
    try:
        return list(spark.sql(sql).first()), None
    except Exception as exc:  # a read that fails is a finding
        err = engine_error(exc)
        return None, f"{err['class'].rsplit('.', 1)[-1]}: {err['message']}"


def _counts(
    spark: SparkSession, source: str, column: str | None, old: int
) -> tuple[dict[str, Any], str | None]:
    """Rows and non-null counts of `column` over old (event_id < old) and new rows."""
    split = f"count_if(event_id < {old}), count_if(event_id >= {old})"
    if column:
        split += f", count(CASE WHEN event_id < {old} THEN {column} END)"
        split += f", count(CASE WHEN event_id >= {old} THEN {column} END)"
    values, error = _try(spark, f"SELECT {split} FROM {source}")
    keys = ["old_rows", "new_rows", "old_nonnull", "new_nonnull"]
    return dict(zip(keys, values or [None] * 4, strict=False)), error


def run_scenario(
    spark: SparkSession, sc: Scenario, catalog: str, scratch: str, scfg: SchemaEvolutionConfig
) -> dict[str, Any]:
    """Build a fresh table and Parquet copy, apply the changes, measure, judge."""
    table, pq = f"{catalog}.lab.{sc.name}", storage.join(scratch, "parquet", sc.name)
    spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")
    spark.sql(create_sql(table, sc.base))
    old, new = scfg.rows, scfg.new_rows
    for k in range(scfg.commits):
        batch = rows(spark, sc.base.columns, k * old // scfg.commits, (k + 1) * old // scfg.commits)
        batch.writeTo(table).append()
        batch.write.mode("append").parquet(pq)
    pre, ids_before = current_snapshot_id(spark, table), field_ids(spark, table)
    state = live_state(spark, table, sc.consumers)
    verdicts = check(state, sc.parsed())

    steps = []
    for change in sc.parsed():
        steps.append(apply_change(spark, table, change))
        if "error" in steps[-1]:
            break  # as a migration script would stop
    failed = next((s for s in steps if "error" in s), None)

    current_cols = [Column(f["name"], parse_type(f["type"]), f["required"]) for f in field_ids(spark, table)]
    write_error = None
    try:
        rows(spark, current_cols, old, old + new).writeTo(table).append()
    except Exception as exc:  # a table that no longer takes writes is a finding
        err = engine_error(exc)
        write_error = f"{err['class'].rsplit('.', 1)[-1]}: {err['message']}"
    # Parquet has no schema authority: new files take the schema the changes ask for.
    rows(spark, intended_columns(state, sc.parsed()), old, old + new).write.mode("append").parquet(pq)

    existed = sc.column in {c.name for c in sc.base.columns}
    tt, tt_error = _try(
        spark,
        f"SELECT count(*){f', count({sc.column})' if existed else ''} FROM {table} "
        f"VERSION AS OF {pre} WHERE event_id < {old}",
    )
    # A change that was refused leaves no column to count (add_default_v2): rows only.
    present = sc.column_after in {c.name for c in current_cols}
    current, current_error = _counts(spark, table, sc.column_after if present else None, old)
    parquet_error = None
    try:
        with _quiet(spark):
            frame = spark.read.option("mergeSchema", "true").parquet(pq)
            frame.createOrReplaceTempView("schema_lab_parquet")
            parquet, parquet_error = _counts(spark, "schema_lab_parquet", sc.column_after, old)
    except Exception as exc:  # e.g. files whose schemas cannot be merged
        err = engine_error(exc)
        parquet, parquet_error = {}, f"{err['class'].rsplit('.', 1)[-1]}: {err['message']}"
    metadata_error = next(
        (e for m in ("files", "partitions") if (e := _try(spark, f"SELECT count(*) FROM {table}.{m}")[1])),
        None,
    )
    consumer_error = None
    for name in sc.consumers:
        got, err = _try(spark, f"SELECT count({name}) FROM {table} WHERE event_id < {old}")
        if err or (tt and got and got[0] < tt[-1]):
            consumer_error = err or f"'{name}' reads {got[0]} of {tt[-1]} values"  # type: ignore[index]

    rec: dict[str, Any] = {
        "scenario": sc.name,
        "what": sc.what,
        "base": sc.base.name,
        "format_version": sc.base.format_version,
        "changes": json.dumps(list(sc.changes)),
        "column": sc.column,
        "column_after": sc.column_after,
        "parquet_equivalent": sc.parquet,
        "api": "iceberg-java" if any(s["api"] == "iceberg-java" for s in steps) else "spark-sql",
        "steps": json.dumps(steps),
        "ids_before": json.dumps(ids_before),
        "ids_after": json.dumps(field_ids(spark, table)),
        "ids_sequence": json.dumps([ids_before, *(s["ids_after"] for s in steps)]),
        "pre_change_snapshot": pre,
        "error_class": failed["error"]["class"] if failed else None,
        "error_message": failed["error"]["message"] if failed else None,
        "error_origin": failed["error"]["origin"] if failed else None,
        "sql_error": next(
            (f"{s['sql_error']['class']}: {s['sql_error']['message']}" for s in steps if "sql_error" in s),
            None,
        ),
        "schema_unchanged": failed["schema_unchanged"] if failed else None,
        "rows_old": old,
        "rows_new": new,
        "tt_old_rows": tt[0] if tt else None,
        "tt_old_nonnull": tt[1] if tt and existed else None,
        "current_old_nonnull": current.get("old_nonnull"),
        "current_new_nonnull": current.get("new_nonnull"),
        "current_rows": (current.get("old_rows") or 0) + (current.get("new_rows") or 0)
        if not current_error
        else None,
        "parquet_old_nonnull": parquet.get("old_nonnull"),
        "parquet_new_nonnull": parquet.get("new_nonnull"),
        "time_travel_error": tt_error,
        "current_error": current_error,
        "write_error": write_error,
        "metadata_error": metadata_error,
        "consumer_error": consumer_error,
        "parquet_error": parquet_error,
        "checker_verdict": worst(verdicts),
        "checker": json.dumps([v.__dict__ for v in verdicts]),
    }
    rec["engine_outcome"], rec["engine_reason"] = engine_outcome(rec)
    rec["agree"] = rec["engine_outcome"] == rec["checker_verdict"]
    return rec


def engine_outcome(rec: dict[str, Any]) -> tuple[str, str]:
    """What the engine did, in the checker's categories.

    rejected: a change raised; hazard: accepted, but old values became invisible, a read, write
    or metadata table failed, or a reader by name broke; safe: accepted, values preserved.
    """
    if rec["error_class"]:
        return REJECTED, f"{rec['error_class'].rsplit('.', 1)[-1]}: {rec['error_message']}"
    problems = []
    before, now = rec["tt_old_nonnull"], rec["current_old_nonnull"]
    if before is not None and now is not None and now < before:
        problems.append(f"old values invisible at the current snapshot ({now} of {before} non-null)")
    for key, what in (
        ("current_error", "current read fails"),
        ("time_travel_error", "time travel fails"),
        ("write_error", "writes fail"),
        ("metadata_error", "metadata tables fail"),
        ("consumer_error", "reader by name breaks"),
    ):
        if rec[key]:
            problems.append(f"{what}: {rec[key]}")
    return (HAZARD, "; ".join(problems)) if problems else (SAFE, "accepted; values preserved")


@run_state.tracked
def run(cfg: DictConfig) -> Path:
    """Run the configured scenarios, store one record each, print and store the outcome table.

    Returns:
        The run directory.

    Raises:
        UserError: for an unknown scenario, or when checker and engine disagree.
    """
    scfg = schema_evolution_config(cfg)
    scenarios = pick(scfg.scenarios)
    ctx = open_context(cfg)
    spark = ctx.spark
    run_dir = ctx.new_run(scfg.name)
    suffix = run_dir.name.rsplit("-", 1)[-1]
    # One catalog and warehouse per run, so concurrent runs never share a table.
    scratch = storage.join(storage.to_uri(ctx.paths.data_dir), "schema_evolution", run_dir.name)
    catalog = f"schema_lab_{suffix}"
    register_iceberg_catalog(spark, catalog, storage.join(scratch, "iceberg"), ctx.engine)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.lab")
    meta: dict[str, Any] = {
        "scenarios": scfg.scenarios,
        "rows": scfg.rows,
        "commits": scfg.commits,
        "new_rows": scfg.new_rows,
        "catalog": catalog,
        "warehouse": storage.join(scratch, "iceberg"),
    }
    run_state.update(run_dir, **meta)
    records: list[dict[str, Any]] = []
    try:
        for sc in scenarios:
            records.append(run_scenario(spark, sc, catalog, scratch, scfg))
            write_parquet(run_dir / RECORDS, pd.DataFrame(records))
    finally:
        if not scfg.keep_tables:
            for sc in scenarios:
                spark.sql(f"DROP TABLE IF EXISTS {catalog}.lab.{sc.name} PURGE")
            storage.Storage(spark).delete(scratch)
    write_tables(run_dir)
    frame = pd.DataFrame(records)
    counts = frame.engine_outcome.value_counts().to_dict()
    disagree = frame.scenario[~frame.agree].tolist()
    # A disagreement raises below, so the run ends "failed": its own check did not pass.
    run_state.update(run_dir, outcomes=counts, agree=len(frame) - len(disagree), disagree=disagree)
    print(to_markdown(outcome_table(frame)))
    print(
        f"schema_evolution: {len(frame)} scenarios, {counts}; checker agrees with the engine on "
        f"{len(frame) - len(disagree)} of {len(frame)}\nresults: {run_dir}"
    )
    if disagree:
        raise UserError(f"checker and engine disagree on {', '.join(disagree)}: see {run_dir / RECORDS}")
    return run_dir
