"""Correctness before speed: every variant must return the same answer, and DuckDB, another
engine reading the Parquet files with its own reader, must return it too.

DuckDB runs the Spark SQL itself (`{table}` becomes DuckDB's Parquet source, backticks double
quotes) unless `queries/duckdb/<query_id>.sql` holds its own version, which is there only where
the dialects differ (explode, lambdas, percentiles, 1-based arrays).

Each (query, window) gets a DuckDB status: `agree`, `differ`, `not checked: <DuckDB's error>`
(DuckDB failed, so nothing was compared: never counted as agreement), or `off` (DuckDB disabled
by `verify.duckdb`, or the data is where DuckDB has no way in: neither local disk nor the
run's object store). A pair that is not checked fails the run
unless `verify.allow_duckdb_errors` is true.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from tqdm import tqdm

from icelab.bench.measure import result_checksum
from icelab.bench.store_guard import Phase
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
    phase: Phase | None = None,
) -> list[dict[str, Any]]:
    """One record per (query, window): Spark's answers, DuckDB's, and whether all agree. A lost
    store (`phase`, `store_guard`) interrupts DuckDB's query and ends the check."""
    phase = phase or Phase("answers")  # unbounded: no store to lose
    path = storage.duckdb_path(dataset.parquet_uri)  # local, or s3:// on the run's object store
    con = duckdb_connection(memory_limit=duckdb_memory) if with_duckdb and path else None
    if con is not None:
        con.execute("SET TimeZone = 'UTC'")  # the queries' timestamp literals are UTC, as in Spark
        phase.on_stop(con.interrupt)
    by_name = {w.name: w for w in windows}
    records = []
    answers = spark_answers(measurements).to_dict("records")
    for rec in tqdm(answers, desc="answers", unit="query", disable=not progress or con is None):
        duck = error = None
        phase.check()
        if con is not None:
            template = duckdb_template(rec["query_id"])
            try:
                duck = duckdb_answer(con, template, parquet_source(path), by_name[rec["window"]])
            except duckdb.Error as exc:  # recorded and counted, as a failing Spark query is
                phase.check(failed=True)  # the store was lost: that ends the run, not this
                error = str(exc).strip().splitlines()[0][:500]
        status = duckdb_status(rec["checksums"], duck, error, checked=con is not None)
        agree = len(rec["checksums"]) == 1 and status in ("agree", "off")
        records.append(
            {**rec, "duckdb": duck, "duckdb_error": error, "duckdb_status": status, "agree": agree}
        )
    return records


def duckdb_status(checksums: list[str], duck: str | None, error: str | None, checked: bool) -> str:
    """`off`, `not checked: <error>`, `agree` or `differ`: what DuckDB said of Spark's answer."""
    if not checked:
        return "off"
    if error is not None:
        return f"not checked: {error}"
    return "agree" if checksums == [duck] else "differ"


def status_of(rec: dict[str, Any]) -> str:
    """A record's DuckDB status; answers.json written before statuses existed gets it derived."""
    if "duckdb_status" in rec:
        return rec["duckdb_status"]
    ran = rec.get("duckdb") is not None or rec.get("duckdb_error") is not None
    return duckdb_status(rec["checksums"], rec.get("duckdb"), rec.get("duckdb_error"), checked=ran)


def differs(rec: dict[str, Any]) -> bool:
    """The variants returned different answers, or DuckDB returned another."""
    return len(rec["checksums"]) != 1 or status_of(rec) == "differ"


def unchecked(checked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs DuckDB was asked to check and could not (its query failed)."""
    return [rec for rec in checked if status_of(rec).startswith("not checked")]


def check_run(
    run_dir: Path,
    measurements: pd.DataFrame,
    dataset: Dataset,
    windows: list[Window],
    verify: Any,
    progress: bool = True,
    phase: Phase | None = None,
) -> list[dict[str, Any]]:
    """`check` with the config's `verify` settings, written to the run's answers.json."""
    duck, memory = bool(verify.duckdb), str(verify.duckdb_memory)
    checked = check(measurements, dataset, windows, duck, memory, progress, phase)
    write_json(run_dir / "answers.json", checked)
    return checked


def raise_if_differ(checked: list[dict[str, Any]], run_dir: Path, allow_unchecked: bool = False) -> None:
    """Fail the run, naming the first (query, window) whose answers differ, or, unless allowed,
    the first that DuckDB could not check.

    Raises:
        UserError: when any answer differs, or DuckDB failed on one and that is not allowed.
    """
    where = run_dir / "answers.json"
    bad = next(
        (rec for rec in checked if len(rec["checksums"]) != 1 or rec["duckdb_status"] == "differ"), None
    )
    if bad is not None:
        raise UserError(f"answers differ for {bad['query_id']} {bad['window']}: see {where}")
    missed = unchecked(checked)
    if missed and not allow_unchecked:
        first = missed[0]
        raise UserError(
            f"{len(missed)} answers not checked by DuckDB, first {first['query_id']} {first['window']}: "
            f"{first['duckdb_error']} (see {where}; verify.allow_duckdb_errors=true accepts this)"
        )


OUTCOMES = ("agree", "agree across variants (DuckDB off)", "not checked by DuckDB", "DIFFER")


def outcome(rec: dict[str, Any]) -> str:
    """One pair's outcome, as the console counts it (one of OUTCOMES)."""
    if differs(rec):
        return "DIFFER"
    status = status_of(rec)
    if status.startswith("not checked"):
        return "not checked by DuckDB"
    return "agree" if status == "agree" else "agree across variants (DuckDB off)"


def verdict(checked: list[dict[str, Any]]) -> str:
    """One console line: how many (query, window) answers were compared, and what came of it."""
    if not checked:
        return "answers: 0 (query, window) pairs executed: nothing compared"
    counts = Counter(outcome(rec) for rec in checked)
    parts = ", ".join(f"{counts[name]} {name}" for name in OUTCOMES if counts[name])
    return f"answers: {len(checked)} (query, window) pairs: {parts}"
