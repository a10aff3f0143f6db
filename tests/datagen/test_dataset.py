"""The tiny dataset end to end: built once in both formats, verified identical by Spark and
DuckDB, cached by config hash, never reused when a build was interrupted."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from icelab.bench.measure import measure
from icelab.core import storage
from icelab.core.config import dataset_config
from icelab.datagen import dataset
from icelab.datagen.build import ensure, read_marker, verify
from icelab.datagen.dataset import Dataset, config_hash
from icelab.datagen.generate import generate_all
from icelab.datagen.verify import frame_checksums


def local(uri: str) -> Path:
    return Path(storage.local_path(uri))


def test_both_tables_were_verified_identical_by_spark_and_duckdb(tiny):
    # The build verifies (test_verification_passes_then_catches_a_changed_row checks that
    # verification itself can fail); here: both tables' readings of tiny agreed on every row,
    # each day read by one Spark and one DuckDB reading of different tables (the default).
    totals = tiny.info["verification"]
    assert totals["iceberg"] == totals["parquet"]
    assert totals["iceberg"][0] == tiny.dataset.config.total_rows
    assert tiny.info["verified_by"] == {
        "spark/iceberg": "before 2026-05-31",
        "spark/parquet": "from 2026-05-31",
        "duckdb/parquet": "before 2026-05-31",
        "duckdb/iceberg": "from 2026-05-31",
    }


def test_layout(ctx, tiny):
    ds, summary = tiny.dataset, tiny.info["summary"]
    dirs = sorted(p.name for p in local(ds.parquet_uri).iterdir() if p.is_dir())
    assert dirs and all(d.startswith("date=") and len(d) == len("date=2026-01-01") for d in dirs)
    assert summary["parquet"]["directories"] == summary["day_partitions"] == len(dirs)
    # One file per day per commit in both formats: the same layout.
    assert summary["parquet"]["files"] == summary["iceberg"]["files"]
    spec = ctx.spark.sql(f"SELECT * FROM {ds.iceberg_table}.partitions").schema["partition"]
    assert spec.dataType.fieldNames() == ["timestamp_day"]


def test_as_ingested_manifests_are_skewed(tiny):
    ice = tiny.info["summary"]["iceberg"]
    commits = tiny.dataset.config.commits
    assert ice["snapshots"] == commits
    assert ice["manifests"] == commits  # merging is off: one manifest per commit
    assert ice["manifest_span_median"] >= 0.5


def test_time_filter_lists_only_matching_parquet_directories(ctx, tiny):
    table = tiny.dataset.parquet_table
    one_day = measure(ctx.spark, f"SELECT count(*) FROM {table} WHERE `date` = DATE'2026-06-01'").scan
    assert one_day["partitions_scanned"] == 1
    day_dir = local(tiny.dataset.parquet_uri) / "date=2026-06-01"
    assert one_day["files_scanned"] == len(list(day_dir.glob("*.parquet")))
    whole = measure(ctx.spark, f"SELECT count(*) FROM {table}").scan
    assert whole["partitions_scanned"] == tiny.info["summary"]["day_partitions"]


def test_reuse_when_config_unchanged(ctx, tiny):
    again = ctx.dataset()
    assert again.reused
    assert again.info["created_utc"] == tiny.info["created_utc"]


def test_hash_ignores_name_and_parallelism_not_data(tiny):
    ds = tiny.dataset.config
    assert config_hash(ds.model_copy(update={"parallelism": 7})) == tiny.dataset.hash
    assert config_hash(ds.model_copy(update={"seed": 1})) != tiny.dataset.hash
    assert config_hash(ds.model_copy(update={"commits": 7})) != tiny.dataset.hash
    # rows x scale is what counts
    assert config_hash(ds.model_copy(update={"rows": ds.rows * 2, "scale": 0.5})) == tiny.dataset.hash


def test_an_arrow_datasets_hash_follows_its_bytes_not_its_sources(compose_cfg, monkeypatch):
    arrow = dataset_config(compose_cfg("dataset=tiny"))
    spark = arrow.model_copy(update={"builder": "spark"})
    before = {"arrow": config_hash(arrow), "spark": config_hash(spark)}
    # Other generator sources: Spark's rows are its sources' (its hash moves); the arrow
    # builder's bytes are pinned by ARROW_BYTES (its hash stays).
    monkeypatch.setattr(dataset, "generator_fingerprint", lambda: "other sources")
    assert config_hash(spark) != before["spark"]
    assert config_hash(arrow) == before["arrow"]
    monkeypatch.setattr(dataset, "ARROW_BYTES", "other bytes")
    assert config_hash(arrow) != before["arrow"]
    monkeypatch.undo()
    monkeypatch.setattr(dataset.pyarrow, "__version__", "0.0.0")
    assert config_hash(arrow) != before["arrow"]
    assert config_hash(spark) == before["spark"]


@pytest.fixture
def micro(ctx, tiny, data_dir):
    """A second, very small dataset (a few days: rebuilding it is cheap)."""
    cfg = tiny.dataset.config.model_copy(
        update={"name": "micro", "rows": 600, "commits": 2, "span_days": 6, "late_max_days": 2}
    )
    return Dataset.of(cfg, str(data_dir))


def test_interrupted_build_is_never_reused(ctx, micro):
    built = ensure(ctx.spark, micro, ctx.engine, progress=False, with_duckdb=False)
    assert not built.reused
    # Simulate a build killed before its completion mark: the tables exist, the mark does not.
    local(micro.marker_uri).unlink()
    assert read_marker(ctx.spark, micro) is None
    rebuilt = ensure(ctx.spark, micro, ctx.engine, progress=False, with_duckdb=False)
    assert not rebuilt.reused
    assert json.loads(local(micro.marker_uri).read_text())["hash"] == micro.hash
    assert rebuilt.info["summary"]["rows"] == 600  # not 1200: the old files were wiped


def test_force_rebuilds(ctx, micro):
    ensure(ctx.spark, micro, ctx.engine, progress=False, with_duckdb=False)
    forced = ensure(ctx.spark, micro, ctx.engine, force=True, progress=False, with_duckdb=False)
    assert not forced.reused
    assert forced.info["summary"]["iceberg"]["snapshots"] == 2


def test_stored_rows_equal_generated_rows(ctx, micro):
    ensure(ctx.spark, micro, ctx.engine, progress=False, with_duckdb=False)
    generated = frame_checksums(generate_all(ctx.spark, micro.config, parallelism=4))
    stored = verify(ctx.spark, micro, with_duckdb=False).readings["spark/iceberg"]
    assert stored == generated


def test_verification_passes_then_catches_a_changed_row(ctx, micro):
    built = ensure(ctx.spark, micro, ctx.engine, progress=False, with_duckdb=False)
    check = verify(ctx.spark, micro, with_duckdb=True, readers_per_day=4)
    assert check.ok, check.mismatches
    assert set(check.readings) == {"spark/iceberg", "spark/parquet", "duckdb/parquet", "duckdb/iceberg"}
    assert {n for n, _ in check.totals().values()} == {micro.config.total_rows}
    # One entry per day partition, all readings agreeing on each.
    assert len(check.readings["duckdb/iceberg"]) == built.info["summary"]["day_partitions"]

    victim = ctx.spark.sql(f"SELECT _id, `date` FROM {micro.iceberg_table} LIMIT 1").first()
    ctx.spark.sql(f"UPDATE {micro.iceberg_table} SET producedBy = 'tampered' WHERE _id = '{victim._id}'")
    check = verify(ctx.spark, micro, with_duckdb=True, readers_per_day=4)
    assert not check.ok
    bad_days = {m.split(":")[0] for m in check.mismatches}
    assert bad_days == {str(victim.date)}
    # DuckDB, reading the files on its own, sees the same change.
    duck = check.readings
    assert duck["duckdb/iceberg"] == duck["spark/iceberg"]
    assert duck["duckdb/parquet"] == duck["spark/parquet"]


def test_two_readings_a_day_cover_every_day_and_catch_a_change_in_either_half(ctx, micro):
    """Each day is read once by Spark and once by DuckDB, from different tables, and each of the
    four readings reads its half only. A changed row is caught on its day in either half."""
    built = ensure(ctx.spark, micro, ctx.engine, force=True, progress=False, with_duckdb=False)  # untampered
    days = built.info["summary"]["day_partitions"]
    check = verify(ctx.spark, micro, with_duckdb=True)
    assert check.ok, check.mismatches
    middle = micro.config.end - dt.timedelta(days=micro.config.span_days // 2)
    for name, cs in check.readings.items():
        assert cs and all((day < middle) == (name in ("spark/iceberg", "duckdb/parquet")) for day in cs), name
    assert len(check.readings["spark/iceberg"]) + len(check.readings["spark/parquet"]) == days
    assert check.readings["spark/iceberg"] == check.readings["duckdb/parquet"]
    assert check.readings["spark/parquet"] == check.readings["duckdb/iceberg"]
    assert {n for n, _ in check.tables().values()} == {micro.config.total_rows}

    early, late = (
        ctx.spark.sql(
            f"SELECT _id, `date` FROM {micro.iceberg_table} WHERE `date` {op} DATE'{middle}' LIMIT 1"
        ).first()
        for op in ("<", ">=")
    )
    for victim in (early, late):
        ctx.spark.sql(f"UPDATE {micro.iceberg_table} SET producedBy = 'tampered' WHERE _id = '{victim._id}'")
    check = verify(ctx.spark, micro, with_duckdb=True)
    assert {m.split(":")[0] for m in check.mismatches} == {str(early.date), str(late.date)}


def test_hour_partitioning(ctx, tiny, data_dir):
    cfg = tiny.dataset.config.model_copy(
        update={
            "name": "hourly",
            "rows": 400,
            "commits": 2,
            "span_days": 2,
            "partitioning": "hour",
            "builder": "spark",  # the arrow builder writes day partitions only
        }
    )
    hourly = Dataset.of(cfg, str(data_dir))
    built = ensure(ctx.spark, hourly, ctx.engine, progress=False, with_duckdb=True)
    assert built.info["summary"]["day_partitions"] == 2
    day_dirs = sorted(p for p in local(hourly.parquet_uri).iterdir() if p.is_dir())
    assert [p.name[:5] for p in day_dirs] == ["date=", "date="]
    assert all(h.name.startswith("hour=") for d in day_dirs for h in d.iterdir() if h.is_dir())
    spec = ctx.spark.sql(f"SELECT * FROM {hourly.iceberg_table}.partitions").schema["partition"]
    assert spec.dataType.fieldNames() == ["timestamp_hour"]
    assert set(built.info["verification"]) == {"iceberg", "parquet"}
    assert set(built.info["verified_by"]) == {
        "spark/iceberg",
        "spark/parquet",
        "duckdb/parquet",
        "duckdb/iceberg",
    }
