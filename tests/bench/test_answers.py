"""Answers: the variants and DuckDB must agree; a DuckDB failure is "not checked", never agreement.

Real Spark results (the session's planning run on tiny) checked by a real DuckDB; the failing
and the disagreeing DuckDB are real DuckDB queries, broken or wrong on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from icelab.bench import answers
from icelab.bench.windows import window_in_data
from icelab.core.errors import UserError
from icelab.datagen.build import Built

MISSING_TABLE = "SELECT count(*) FROM icelab_no_such_table"  # DuckDB: Catalog Error


@pytest.fixture(scope="module")
def measured(planning_run: Path) -> pd.DataFrame:
    return pd.read_parquet(planning_run / "measurements.parquet")


@pytest.fixture(scope="module")
def windows(measured: pd.DataFrame, tiny: Built) -> list:
    return [window_in_data(name, None, tiny.dataset.config) for name in measured["window"].unique()]


def checked_with(measured, tiny, windows, **kw) -> list[dict]:
    return answers.check(measured, tiny.dataset, windows, duckdb_memory="1GB", progress=False, **kw)


def test_duckdb_agrees_with_every_variant(measured, tiny, windows, tmp_path):
    checked = checked_with(measured, tiny, windows, with_duckdb=True)
    assert len(checked) == 9 and all(rec["duckdb_status"] == "agree" and rec["agree"] for rec in checked)
    assert all(rec["duckdb"] == rec["checksums"][0] for rec in checked)
    assert answers.verdict(checked) == "answers: 9 (query, window) pairs: 9 agree"
    answers.raise_if_differ(checked, tmp_path)  # nothing to raise


def test_a_duckdb_error_is_not_checked_and_fails_unless_allowed(
    measured, tiny, windows, tmp_path, monkeypatch
):
    monkeypatch.setattr(answers, "duckdb_template", lambda query_id: MISSING_TABLE)
    checked = checked_with(measured, tiny, windows, with_duckdb=True)
    assert all(rec["duckdb"] is None and not rec["agree"] for rec in checked)
    assert all(rec["duckdb_status"].startswith("not checked: Catalog Error") for rec in checked)
    assert answers.verdict(checked) == "answers: 9 (query, window) pairs: 9 not checked by DuckDB"
    with pytest.raises(UserError, match=r"^9 answers not checked by DuckDB, first .*Catalog Error"):
        answers.raise_if_differ(checked, tmp_path)
    answers.raise_if_differ(checked, tmp_path, allow_unchecked=True)


def test_one_failing_pair_is_counted_apart(measured, tiny, windows, monkeypatch):
    real = answers.duckdb_template
    monkeypatch.setattr(
        answers, "duckdb_template", lambda q: MISSING_TABLE if q == "nested_filter_window" else real(q)
    )
    checked = checked_with(measured, tiny, windows, with_duckdb=True)
    assert answers.verdict(checked) == "answers: 9 (query, window) pairs: 6 agree, 3 not checked by DuckDB"


def test_a_different_duckdb_answer_fails_the_run(measured, tiny, windows, tmp_path, monkeypatch):
    monkeypatch.setattr(answers, "duckdb_template", lambda query_id: "SELECT 42 AS n")
    checked = checked_with(measured, tiny, windows, with_duckdb=True)
    assert all(rec["duckdb_status"] == "differ" and not rec["agree"] for rec in checked)
    assert answers.verdict(checked).endswith(": 9 DIFFER")
    with pytest.raises(UserError, match="^answers differ for "):
        answers.raise_if_differ(checked, tmp_path, allow_unchecked=True)


def test_variants_that_disagree_fail_even_with_duckdb_off(measured, tiny, windows, tmp_path):
    tampered = measured.copy()
    first = tampered.index[tampered["executed"]][0]
    tampered.loc[first, "result_checksum"] = "0:tampered"
    checked = checked_with(tampered, tiny, windows, with_duckdb=False)
    assert {rec["duckdb_status"] for rec in checked} == {"off"}
    assert (
        answers.verdict(checked)
        == "answers: 9 (query, window) pairs: 8 agree across variants (DuckDB off), 1 DIFFER"
    )
    with pytest.raises(UserError, match="^answers differ for "):
        answers.raise_if_differ(checked, tmp_path)


def test_no_executed_pair_is_said_so():
    assert answers.verdict([]) == "answers: 0 (query, window) pairs executed: nothing compared"


SMALLEST = [
    "experiment=smoke",
    "experiment.queries=[count_window]",
    "experiment.windows=[1h,1d]",
    "experiment.ratio=[1d,1h]",
    "profile=[as_ingested]",
    "protocol.warmups=0",
    "protocol.repetitions=1",
    "protocol.overhead_pairs=0",
]


def test_a_run_whose_duckdb_fails_ends_failed(compose_run, tiny, monkeypatch):
    from icelab.core.runs import find_runs
    from icelab.experiments import planning

    monkeypatch.setattr(answers, "duckdb_template", lambda query_id: MISSING_TABLE)
    cfg = compose_run(*SMALLEST, "experiment.name=smoke_duckdb_error")
    with pytest.raises(UserError, match="answers not checked by DuckDB"):
        planning.run(cfg)
    run = max(find_runs(Path(cfg.paths.results_dir)), key=lambda r: r.run_id)
    assert run.experiment == "smoke_duckdb_error" and run.status == "failed"
    recorded = json.loads((run.path / "answers.json").read_text())
    assert [rec["duckdb_status"].split(":")[0] for rec in recorded] == ["not checked", "not checked"]
