"""The schema-evolution lab on real Spark + Iceberg, shrunk: 200 old rows in 1 commit, 20 new
rows, every scenario once. Figures are exact: every 10th row has a NULL payload."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from icelab.core.errors import UserError
from icelab.experiments import schema_evolution

OLD_NONNULL = 180  # 200 old rows, payload NULL on ids 0, 10, ..., 190
NEW_NONNULL = 18  # 20 new rows, ids 200..219


@pytest.fixture(scope="module")
def lab(ctx, compose_run) -> tuple[Path, pd.DataFrame]:
    cfg = compose_run(
        "experiment=schema_evolution", "experiment.rows=200", "experiment.commits=1", "experiment.new_rows=20"
    )
    run_dir = schema_evolution.run(cfg)
    return run_dir, pd.read_parquet(run_dir / "scenarios.parquet").set_index("scenario")


def ids(fields: list[dict]) -> list[tuple[int, str, str]]:
    return [(f["id"], f["name"], f["type"]) for f in fields]


def test_reference_field_id_sequence(lab):
    _, rec = lab
    created, dropped, readded = json.loads(rec.loc["reference", "ids_sequence"])
    assert ids(created) == [(1, "event_id", "long"), (2, "payload", "string")]
    assert ids(dropped) == [(1, "event_id", "long")]
    assert ids(readded) == [(1, "event_id", "long"), (3, "payload", "binary")]


def test_drop_then_add_hides_old_values_time_travel_and_rename_keep_them(lab):
    _, rec = lab
    for name in ("reference", "drop_add", "drop_add_binary"):
        r = rec.loc[name]
        assert (r.current_old_nonnull, r.tt_old_nonnull, r.current_new_nonnull) == (
            0,
            OLD_NONNULL,
            NEW_NONNULL,
        )
        assert r.engine_outcome == "hazard"
    # Parquet read by name: the same-type re-add is invisible to it, old values still read
    assert rec.loc["drop_add", "parquet_old_nonnull"] == OLD_NONNULL
    assert "CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE" in rec.loc["drop_add_binary", "parquet_error"]
    rename = rec.loc["rename"]
    assert (rename.current_old_nonnull, rename.tt_old_nonnull, rename.current_new_nonnull) == (
        OLD_NONNULL,
        OLD_NONNULL,
        NEW_NONNULL,
    )
    assert rename.parquet_old_nonnull == 0  # by name, old files have no 'body'
    assert json.loads(rename.ids_after)[1] == {"id": 2, "name": "body", "type": "string", "required": False}
    # the deliberate variant: the old id keeps its values under the new name
    assert rec.loc["rename_add", "current_old_nonnull"] == OLD_NONNULL


REJECTED = {
    "reject_string_binary": (
        "java.lang.IllegalArgumentException",
        "Cannot change column type: payload: string -> binary",
    ),
    "reject_long_int": (
        "java.lang.IllegalArgumentException",
        "Cannot change column type: event_id: long -> int",
    ),
    "reject_double_float": (
        "java.lang.IllegalArgumentException",
        "Cannot change column type: ratio: double -> float",
    ),
    "reject_decimal_narrow": (
        "java.lang.IllegalArgumentException",
        "Cannot change column type: amount: decimal(9, 2) -> decimal(7, 2)",
    ),
    "reject_required": (
        "java.lang.IllegalArgumentException",
        "Cannot change column nullability: payload: optional -> required",
    ),
    "add_default_v2": (
        "java.lang.IllegalStateException",
        "Invalid schema for v2: - Invalid initial default for note",
    ),
    "partition_source_drop": (
        "org.apache.iceberg.exceptions.ValidationException",
        "Cannot find source column for partition field: 1000: ts_day: day(3)",
    ),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_change_raises_icebergs_error_and_leaves_schema_unchanged(lab, name):
    _, rec = lab
    r = rec.loc[name]
    cls, message = REJECTED[name]
    assert (r.engine_outcome, r.error_origin, r.error_class) == ("rejected", "iceberg", cls)
    assert r.error_message.startswith(message)
    assert r.schema_unchanged and json.loads(r.ids_after) == json.loads(r.ids_before)
    if not pd.isna(r.tt_old_nonnull):  # nothing lost either
        assert r.current_old_nonnull == r.tt_old_nonnull


def test_spark_refusals_are_recorded_beside_icebergs_own_error(lab):
    _, rec = lab
    assert "NOT_SUPPORTED_CHANGE_COLUMN" in rec.loc["reject_long_int", "sql_error"]
    assert rec.loc["reject_long_int", "api"] == "iceberg-java"
    assert rec.loc["partition_source_drop", "api"] == "spark-sql"


def test_add_default_on_v3_fills_old_rows(lab):
    _, rec = lab
    r = rec.loc["add_default"]
    assert (r.engine_outcome, r.api, r.current_old_nonnull, r.parquet_old_nonnull) == (
        "safe",
        "iceberg-java",
        200,
        0,
    )
    assert "setting default values in Spark is currently unsupported" in r.sql_error


def test_partition_hazards_break_metadata_tables_not_reads(lab):
    _, rec = lab
    for name in ("old_partition_source_drop", "readd_partition_name"):
        r = rec.loc[name]
        assert r.engine_outcome == "hazard" and pd.isna(r.error_class)
        assert "Cannot find source column for partition field" in r.metadata_error
        assert r[["time_travel_error", "current_error", "write_error"]].isna().all()
    assert rec.loc["readd_partition_name", "current_old_nonnull"] == 0


EXPECTED = {
    "safe": {
        "rename",
        "rename_add",
        "widen_int_long",
        "widen_float_double",
        "widen_decimal",
        "reorder",
        "add_default",
    },
    "hazard": {
        "reference",
        "rename_consumer",
        "drop_add",
        "drop_add_binary",
        "old_partition_source_drop",
        "readd_partition_name",
    },
    "rejected": set(REJECTED),
}


def test_checker_verdicts_agree_with_engine_outcomes(lab):
    run_dir, rec = lab
    assert {k: set(v.index) for k, v in rec.groupby("engine_outcome")} == EXPECTED
    assert rec.agree.all() and (rec.checker_verdict == rec.engine_outcome).all()
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "complete" and run["disagree"] == [] and run["agree"] == 20
    md = (run_dir / "outcomes.md").read_text().splitlines()
    assert len(md) == 2 + 20 and "| reference | drop payload; add payload binary |" in md[2]
    assert "<table" in (run_dir / "outcomes.html").read_text()
    for name in ("env.json", "config.yaml"):
        assert (run_dir / name).is_file()


def test_scratch_tables_are_deleted(lab, data_dir):
    run_dir, _ = lab
    assert not (data_dir / "schema_evolution" / run_dir.name).exists()


def test_a_disagreement_fails_the_run(lab, monkeypatch, compose_run):
    # the checker thinks a plain rename is a hazard: the run must refuse to pass
    import icelab.schema.rules as sc

    monkeypatch.setattr(sc._Checker, "_rename", lambda self, c, s: (sc.HAZARD, "test", "", s))
    cfg = compose_run(
        "experiment=schema_evolution",
        "experiment.rows=20",
        "experiment.commits=1",
        "experiment.new_rows=2",
        "experiment.scenarios=[rename]",
    )
    with pytest.raises(UserError, match="checker and engine disagree on rename"):
        schema_evolution.run(cfg)


def test_unknown_scenario_is_one_line():
    with pytest.raises(
        UserError, match=r"unknown scenario 'nope' \(choose from: add_default, add_default_v2, "
    ):
        schema_evolution.pick(["rename", "nope"])


def test_rows_fewer_than_commits_is_rejected(compose_run):
    from icelab.core.config import schema_evolution_config

    cfg = compose_run("experiment=schema_evolution", "experiment.rows=2", "experiment.commits=3")
    with pytest.raises(UserError, match=r"rows \(2\) is fewer than commits \(3\)"):
        schema_evolution_config(cfg)
