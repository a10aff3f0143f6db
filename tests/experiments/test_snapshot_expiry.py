"""Snapshot expiry on tiny: fewer snapshots and a smaller metadata.json, the same rows; and a
reader that planned on a snapshot keeps reading it while a rewrite and an expiry commit."""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd

from icelab.bench.measure import result_checksum, scan_nodes
from icelab.datagen.verify import frame_checksums
from icelab.experiments import snapshot_expiry


def test_expiry_keeps_rows_and_shrinks_metadata(ctx, compose_run, tiny):
    cfg = compose_run(
        "experiment=snapshot_expiry",
        "experiment.commits_per_day=1",
        "experiment.retain_days=2",
        "experiment.probe_repetitions=1",
    )
    run_dir = snapshot_expiry.run(cfg)
    summary = json.loads((run_dir / "expiry.json").read_text())
    before, after = summary["before"], summary["after"]
    assert (before["snapshots"], after["snapshots"]) == (6, 2)
    assert after["metadata_json_bytes"] < before["metadata_json_bytes"]
    assert summary["unchanged"] and summary["rows"] == summary["expected_rows"] == 12_000
    original = frame_checksums(ctx.spark.table(tiny.dataset.iceberg_table))
    assert summary["checksum"] == sum(c for _, c in original.values())  # the replay is the dataset
    timeline = pd.read_parquet(run_dir / "timeline.parquet")
    assert list(timeline.phase) == ["ingest"] * 6 + ["after_expiry"]
    assert timeline.snapshots.tolist()[:6] == [1, 2, 3, 4, 5, 6]
    assert (run_dir / "expiry.png").is_file()


def test_a_planned_reader_keeps_its_snapshot_through_rewrite_and_expiry(ctx, tiny):
    spark, src = ctx.spark, tiny.dataset.iceberg_table
    table = f"{tiny.dataset.catalog}.bench.isolation"
    spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")
    spark.sql(f"CREATE TABLE {table} USING iceberg PARTITIONED BY (days(timestamp)) AS SELECT * FROM {src}")
    spark.table(src).limit(500).writeTo(table).append()  # a second snapshot to expire later
    held = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at").first()[0]
    sql = f"SELECT _id, timestamp FROM {table} VERSION AS OF {held}"
    expected = result_checksum(spark.sql(sql).collect())
    reader = spark.sql(sql)  # the reader plans: its splits are fixed now
    for scan in scan_nodes(reader._jdf.queryExecution().executedPlan()):
        scan.inputRDD().partitions()
    short = table.split(".", 1)[1]
    cat = tiny.dataset.catalog
    spark.sql(f"CALL {cat}.system.rewrite_manifests(table => '{short}')")
    assert result_checksum(spark.sql(sql).collect()) == expected  # time travel after the rewrite
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    spark.sql(
        f"CALL {cat}.system.expire_snapshots(table => '{short}', "
        f"older_than => TIMESTAMP '{now}', retain_last => 1)"
    )
    assert spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0] == 1
    assert result_checksum(reader.collect()) == expected  # the planned reader still reads its rows
    spark.sql(f"DROP TABLE {table} PURGE")
