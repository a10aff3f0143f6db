"""How a (query, window)'s answers are judged, without a JVM: which Spark rows give an answer,
DuckDB's status, legacy answers.json records, the console verdict and when the run fails."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from icelab.bench import answers
from icelab.core.errors import UserError


def test_only_executed_ok_rows_give_an_answer():
    rows = pd.DataFrame(
        {
            "query_id": ["q"] * 5,
            "window": ["1d"] * 5,
            "variant": ["parquet", "iceberg", "iceberg", "parquet", "iceberg/8mb"],
            "executed": [True, True, False, True, True],
            "status": ["ok", "ok", "ok", "error", "ok"],
            "result_checksum": ["a", "a", "planned-only", "failed", "b"],
        }
    )
    got = answers.spark_answers(rows).iloc[0]
    assert got["checksums"] == ["a", "b"] and got["variants"] == 3


@pytest.mark.parametrize(
    ("checksums", "duck", "error", "checked", "status"),
    [
        (["a"], None, None, False, "off"),
        (["a"], None, "Catalog Error: no table", True, "not checked: Catalog Error: no table"),
        (["a"], "a", None, True, "agree"),
        (["a"], "b", None, True, "differ"),
        (["a", "b"], "a", None, True, "differ"),  # DuckDB matches one variant, not the pair's answer
    ],
)
def test_duckdbs_status(checksums, duck, error, checked, status):
    assert answers.duckdb_status(checksums, duck, error, checked) == status


@pytest.mark.parametrize(
    ("record", "status"),
    [
        ({"checksums": ["a"], "duckdb": "a"}, "agree"),
        ({"checksums": ["a"], "duckdb": "b"}, "differ"),
        ({"checksums": ["a"], "duckdb": None, "duckdb_error": "boom"}, "not checked: boom"),
        ({"checksums": ["a"], "duckdb": None}, "off"),  # DuckDB never ran
        ({"checksums": ["a"], "duckdb": "b", "duckdb_status": "agree"}, "agree"),  # a stored status wins
    ],
)
def test_a_record_written_before_statuses_gets_one_derived(record, status):
    assert answers.status_of(record) == status


@pytest.mark.parametrize(
    ("record", "outcome"),
    [
        ({"checksums": ["a"], "duckdb_status": "agree"}, "agree"),
        ({"checksums": ["a"], "duckdb_status": "off"}, "agree across variants (DuckDB off)"),
        ({"checksums": ["a"], "duckdb_status": "not checked: boom"}, "not checked by DuckDB"),
        ({"checksums": ["a"], "duckdb_status": "differ"}, "DIFFER"),
        ({"checksums": ["a", "b"], "duckdb_status": "off"}, "DIFFER"),  # variants disagree, DuckDB off
        ({"checksums": ["a", "b"], "duckdb_status": "not checked: boom"}, "DIFFER"),
    ],
)
def test_each_pairs_outcome(record, outcome):
    assert answers.outcome(record) == outcome
    assert answers.differs(record) == (outcome == "DIFFER")


def test_the_verdict_counts_each_outcome_in_order():
    checked = [
        {"checksums": ["a"], "duckdb_status": "agree"},
        {"checksums": ["a"], "duckdb_status": "agree"},
        {"checksums": ["a"], "duckdb_status": "not checked: boom"},
        {"checksums": ["a", "b"], "duckdb_status": "off"},
    ]
    assert answers.verdict(checked) == (
        "answers: 4 (query, window) pairs: 2 agree, 1 not checked by DuckDB, 1 DIFFER"
    )


def pair(query: str, checksums: list[str], status: str, error: str | None = None) -> dict:
    return {
        "query_id": query,
        "window": "1d",
        "checksums": checksums,
        "duckdb_status": status,
        "duckdb_error": error,
    }


def test_agreeing_and_off_pairs_pass(tmp_path: Path):
    answers.raise_if_differ([pair("q1", ["a"], "agree"), pair("q2", ["b"], "off")], tmp_path)


@pytest.mark.parametrize(
    "bad",
    [pair("q2", ["a", "b"], "off"), pair("q2", ["a"], "differ")],
    ids=["variants disagree", "duckdb disagrees"],
)
def test_a_differing_pair_fails_the_run_naming_it(bad, tmp_path: Path):
    checked = [pair("q1", ["a"], "agree"), bad, pair("q3", ["a"], "not checked: boom", "boom")]
    with pytest.raises(UserError, match=rf"^answers differ for q2 1d: see {tmp_path}/answers.json$"):
        answers.raise_if_differ(checked, tmp_path, allow_unchecked=True)


def test_an_unchecked_pair_fails_unless_allowed(tmp_path: Path):
    checked = [pair("q1", ["a"], "agree"), pair("q3", ["a"], "not checked: boom", "boom")]
    with pytest.raises(UserError, match=r"^1 answers not checked by DuckDB, first q3 1d: boom \(see "):
        answers.raise_if_differ(checked, tmp_path)
    answers.raise_if_differ(checked, tmp_path, allow_unchecked=True)
    assert answers.unchecked(checked) == [checked[1]]
