"""Correctness before speed: every variant must return the same answer, and DuckDB, another
engine reading the Parquet files with its own reader, must return it too.

DuckDB runs the Spark SQL itself (`{table}` becomes DuckDB's Parquet source, backticks double
quotes) unless `queries/duckdb/<query_id>.sql` holds its own version, which is there only where
the dialects differ (explode, lambdas, percentiles, 1-based arrays).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from tqdm import tqdm

from icelab.bench.measure import result_checksum
from icelab.bench.windows import QUERIES, Window, load_query
from icelab.core import storage
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.datagen.dataset import Dataset
from icelab.datagen.verify import duckdb_connection, parquet_source

DUCKDB_QUERIES = QUERIES / "duckdb"


def spark_answers(measurements: pd.DataFrame) -> pd.DataFrame:
    """Per (query, window): the distinct checksums the executed variants returned."""
    done = measurements[measurements["executed"] & (measurements["status"] == "ok")]
    return (
        done.groupby(["query_id", "window"], sort=False)
        .agg(checksums=("result_checksum", lambda s: sorted(set(s))), variants=("variant", "nunique"))
        .reset_index()
    )


def duckdb_template(query_id: str) -> str:
    """DuckDB's SQL for a query: its own file where the dialects differ, else the Spark SQL."""
    own = DUCKDB_QUERIES / f"{query_id}.sql"
    if own.is_file():
        return own.read_text()
    return load_query(query_id).replace("{table}", "{source}").replace("`", '"')


def duckdb_answer(con: Any, template: str, source: str, window: Window) -> str:
    """DuckDB's result checksum for one query and window."""
    sql = template.format(source=source, **window.params)
    return result_checksum(con.execute(sql).fetchall())


def check(
    measurements: pd.DataFrame,
    dataset: Dataset,
    windows: list[Window],
    with_duckdb: bool,
    duckdb_memory: str,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """One record per (query, window): Spark's answers, DuckDB's, and whether all agree."""
    local = storage.local_path(dataset.parquet_uri)
    con = duckdb_connection(memory_limit=duckdb_memory) if with_duckdb and local else None
    if con is not None:
        con.execute("SET TimeZone = 'UTC'")  # the queries' timestamp literals are UTC, as in Spark
    by_name = {w.name: w for w in windows}
    records = []
    answers = spark_answers(measurements).to_dict("records")
    for rec in tqdm(answers, desc="answers", unit="query", disable=not progress or con is None):
        duck = error = None
        if con is not None:
            template = duckdb_template(rec["query_id"])
            try:
                duck = duckdb_answer(con, template, parquet_source(local), by_name[rec["window"]])
            except duckdb.Error as exc:  # recorded and counted, as a failing Spark query is
                error = str(exc).strip().splitlines()[0][:500]
        agree = len(rec["checksums"]) == 1 and duck in (None, rec["checksums"][0])
        records.append({**rec, "duckdb": duck, "duckdb_error": error, "agree": agree})
    return records


def check_run(
    run_dir: Path,
    measurements: pd.DataFrame,
    dataset: Dataset,
    windows: list[Window],
    verify: Any,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """`check` with the config's `verify` settings, written to the run's answers.json."""
    checked = check(measurements, dataset, windows, bool(verify.duckdb), str(verify.duckdb_memory), progress)
    write_json(run_dir / "answers.json", checked)
    return checked


def raise_if_differ(checked: list[dict[str, Any]], run_dir: Path) -> None:
    """Fail the run, naming the first (query, window) whose answers differ.

    Raises:
        UserError: when any answer differs.
    """
    bad = next((rec for rec in checked if not rec["agree"]), None)
    if bad is not None:
        raise UserError(
            f"answers differ for {bad['query_id']} {bad['window']}: see {run_dir / 'answers.json'}"
        )


def verdict(checked: list[dict[str, Any]]) -> str:
    """One console line: how many answers were compared, by how many engines, and the outcome."""
    duck = sum(rec["duckdb"] is not None for rec in checked)
    failed = sum(rec.get("duckdb_error") is not None for rec in checked)
    outcome = "agree" if all(rec["agree"] for rec in checked) else "DIFFER"
    errors = f" ({failed} failed in DuckDB)" if failed else ""
    return f"answers: {len(checked)} (query, window) pairs, {duck} also checked by DuckDB{errors}: {outcome}"
