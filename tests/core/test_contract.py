"""The results contract's validator catches each kind of breach."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from icelab.core.contract import (
    COLUMNS,
    MEASUREMENTS,
    missing_columns,
    read_measurements,
    to_table,
    validate,
)
from icelab.tools.contract import main


def row(variant: str, window: str, checksum: str = "1:a", **kw) -> dict:
    return (
        dict(
            query_id="q",
            variant=variant,
            window=window,
            repetition=0,
            warmup=False,
            executed=True,
            status="ok",
            planning_ms=5.0,
            result_checksum=checksum,
        )
        | kw
    )


@pytest.fixture
def run(tmp_path):
    rows = [row(v, w) for v in ("parquet", "iceberg/as_ingested") for w in ("1d", "7d")]
    pq.write_table(to_table(rows), tmp_path / MEASUREMENTS)
    env = {k: {} for k in ("machine", "versions", "git", "spark_conf", "dataset")}
    (tmp_path / "env.json").write_text(json.dumps(env))
    (tmp_path / "config.yaml").write_text("seed: 42\n")
    (tmp_path / "run.json").write_text(json.dumps({"status": "complete", "planned_rows": 4}))
    return tmp_path


def rewrite(run, rows):
    pq.write_table(to_table(rows), run / MEASUREMENTS)


def test_valid_run(run, capsys):
    assert validate(run) == []
    out = capsys.readouterr().out if main([str(run)]) == 0 else ""
    assert "ok (4 rows; marked: 0 stall, 0 gc, 0 outlier; 0 measured again)" in out


def test_unknown_column_is_refused():
    with pytest.raises(ValueError, match="outside the contract"):
        to_table([{"query_id": "q", "planing_ms": 1.0}])


def test_missing_rows(run):
    rewrite(run, [row("parquet", "1d"), row("parquet", "7d"), row("iceberg/as_ingested", "1d")])
    assert validate(run) == ["3 rows, but 4 were planned"]


def test_steady_state_rows_count_as_planned(run):
    """The rows the steady-state phase added are expected too, and only as many as it says."""
    rows = [row(v, w) for v in ("parquet", "iceberg/as_ingested") for w in ("1d", "7d")]
    rewrite(run, rows + [row("parquet", "1d", repetition=-2, warmup=True)])
    assert validate(run) == ["5 rows, but 4 were planned"]
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"steady_state": {"rows": 1, "cases": []}}))
    assert validate(run) == []
    (run / "run.json").write_text(json.dumps(info | {"steady_state": {"rows": 2, "cases": []}}))
    assert validate(run) == ["5 rows, but 4 (+ 2 steady-state warm-ups) were planned"]


def test_differing_answers(run):
    rewrite(
        run,
        [row("parquet", w) for w in ("1d", "7d")]
        + [row("iceberg/as_ingested", "1d"), row("iceberg/as_ingested", "7d", checksum="1:b")],
    )
    (problem,) = validate(run)
    assert problem.startswith("q 7d: answers differ")


def test_failures_unless_allowed(run):
    rewrite(
        run,
        [row("parquet", w) for w in ("1d", "7d")]
        + [
            row("iceberg/as_ingested", "1d"),
            row("iceberg/as_ingested", "7d", status="error", error="boom", executed=False, planning_ms=None),
        ],
    )
    assert validate(run) == ["1 failed measurements, e.g. q iceberg/as_ingested: boom"]
    assert validate(run, allow_failures=True) == []


def test_a_measurement_cancelled_at_the_timeout_is_an_outcome_not_a_breach(run):
    cancelled = "cancelled after protocol.timeout_s=300: An error occurred while calling o1.executedPlan."
    rows = [row("parquet", w) for w in ("1d", "7d")] + [row("iceberg/as_ingested", "1d")]
    failed = dict(status="error", executed=False, planning_ms=None)
    rewrite(run, [*rows, row("iceberg/as_ingested", "7d", error=cancelled, **failed)])
    assert validate(run) == []
    # Any other error still is one, whatever it mentions.
    rewrite(run, [*rows, row("iceberg/as_ingested", "7d", error="timeout_s: boom", **failed)])
    assert validate(run) == ["1 failed measurements, e.g. q iceberg/as_ingested: timeout_s: boom"]


def test_the_same_cell_of_two_datasets_is_no_duplicate(run):
    rows = [row("parquet", "1d"), row("iceberg/as_ingested", "1d")]
    rewrite(run, [*rows, *(r | {"dataset": "other-123"} for r in rows)])
    assert not any("duplicate" in p for p in validate(run))


def test_duplicates_and_schema(run):
    rewrite(run, [row("parquet", "1d")] * 2 + [row("iceberg/as_ingested", w) for w in ("1d", "7d")])
    assert validate(run) == ["1 duplicate (dataset, query, variant, window, repetition, retake) rows"]
    pq.write_table(to_table([row("parquet", "1d")]).drop_columns(["bytes_scanned"]), run / MEASUREMENTS)
    (problem,) = validate(run)
    assert "schema differs" in problem and "bytes_scanned" in problem


def test_older_runs_read_with_the_newer_columns_as_nulls(run):
    old = pq.read_table(run / MEASUREMENTS).drop_columns(["setup", "vectorized"])
    pq.write_table(old, run / MEASUREMENTS)
    frame = read_measurements(run)
    assert list(frame.columns) == COLUMNS
    assert frame["vectorized"].isna().all() and frame["setup"].isna().all()
    assert frame["planning_ms"].tolist() == [5.0] * 4
    # The validator still says the stored schema is not the contract's.
    assert "schema differs" in validate(run)[0]


def test_an_experiment_directory_is_checked_on_its_newest_run_whatever_its_status(run, tmp_path, capsys):
    # A checker must report a failed newest run, not fall back to an older complete one.
    experiment = tmp_path / "smoke"
    newest = experiment / "20261122T000001Z-bbbbbb"
    for target in (experiment / "20261122T000000Z-aaaaaa", newest):
        target.mkdir(parents=True)
        for name in (MEASUREMENTS, "env.json", "config.yaml", "run.json"):
            shutil.copy2(run / name, target / name)
    (newest / "run.json").write_text(json.dumps({"status": "failed", "planned_rows": 4}))
    assert main([str(experiment)]) == 1
    captured = capsys.readouterr()
    assert f"contract: {newest}: run status is 'failed', not 'complete'" in captured.out
    assert "is not complete (status 'failed')" in captured.err


def test_an_older_run_lacking_new_columns_passes_when_allowed(run):
    pq.write_table(
        pq.read_table(run / MEASUREMENTS).drop_columns(["setup", "vectorized"]), run / MEASUREMENTS
    )
    assert missing_columns(pq.read_schema(run / MEASUREMENTS)) == ["setup", "vectorized"]
    assert validate(run, allow_older=True) == []
    renamed = pq.read_table(run / MEASUREMENTS).rename_columns(
        [c if c != "bytes_scanned" else "bytes" for c in pq.read_schema(run / MEASUREMENTS).names]
    )
    pq.write_table(renamed, run / MEASUREMENTS)
    assert missing_columns(renamed.schema) is None  # not an older contract: another schema
    assert "schema differs" in validate(run, allow_older=True)[0]
