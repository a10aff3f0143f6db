"""Correctness before speed: every variant must return the same answer, and DuckDB, another
engine reading the Parquet files with its own reader, must return it too.

DuckDB's version of a query lives in `queries/duckdb/<query_id>.sql` (same placeholders, plus
`{source}`); a query without one is checked across Spark variants only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from datagen.dataset import Dataset
from datagen.verify import duckdb_connection, parquet_source
from experiments.measure import result_checksum
from experiments.windows import QUERIES, Window
from icelab import storage

DUCKDB_QUERIES = QUERIES / "duckdb"


def spark_answers(measurements: pd.DataFrame) -> pd.DataFrame:
    """Per (query, window): the distinct checksums the executed variants returned."""
    done = measurements[measurements["executed"] & (measurements["status"] == "ok")]
    return (
        done.groupby(["query_id", "window"], sort=False)
        .agg(checksums=("result_checksum", lambda s: sorted(set(s))), variants=("variant", "nunique"))
        .reset_index()
    )


def duckdb_answer(con: Any, template_path: Path, source: str, window: Window) -> str:
    """DuckDB's result checksum for one query and window."""
    sql = template_path.read_text().format(source=source, **window.params)
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
    by_name = {w.name: w for w in windows}
    records = []
    answers = spark_answers(measurements).to_dict("records")
    for rec in tqdm(answers, desc="answers", unit="query", disable=not progress or con is None):
        template = DUCKDB_QUERIES / f"{rec['query_id']}.sql"
        duck = None
        if con is not None and template.is_file():
            duck = duckdb_answer(con, template, parquet_source(local), by_name[rec["window"]])
        agree = len(rec["checksums"]) == 1 and duck in (None, rec["checksums"][0])
        records.append({**rec, "duckdb": duck, "agree": agree})
    return records
