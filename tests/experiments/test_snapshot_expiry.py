"""Snapshot expiry on tiny: fewer snapshots and a smaller metadata.json, the same rows; and a
snapshot read by time travel and by a planned reader until expiry deletes its files."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest
from py4j.protocol import Py4JJavaError

from icelab.bench.measure import result_checksum, scan_nodes
from icelab.core.errors import UserError
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
    # The replay is the dataset: its checksum is the one the build verified for the Iceberg table
    # (the same sum of frame_checksums over the same schema, the readers agreeing), not hashed
    # again here: hashing the table's nested rows again took 4.8 s in a warm session.
    assert summary["checksum"] == tiny.info["verification"]["iceberg"][1]
    timeline = pd.read_parquet(run_dir / "timeline.parquet")
    assert list(timeline.phase) == ["ingest"] * 6 + ["after_expiry"]
    assert timeline.snapshots.tolist()[:6] == [1, 2, 3, 4, 5, 6]
    assert (run_dir / "expiry.png").is_file()


def data_files(spark, table: str, snapshot: int | None = None) -> set[str]:
    """The data files a snapshot (default: the current one) reads."""
    travel = "" if snapshot is None else f" VERSION AS OF {snapshot}"
    return {r[0] for r in spark.sql(f"SELECT DISTINCT input_file_name() FROM {table}{travel}").collect()}


def test_a_snapshot_reads_its_own_files_until_expiry_deletes_them(ctx, tiny):
    """Time travel and a reader that planned on an old snapshot keep working after the data is
    rewritten, while the snapshot is retained; once expiry removes it and deletes its files,
    that reader fails: the hazard of a retention shorter than the longest query."""
    spark, src, cat = ctx.spark, tiny.dataset.iceberg_table, tiny.dataset.catalog
    table = f"{cat}.bench.isolation"
    short = table.split(".", 1)[1]
    spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")
    spark.sql(f"CREATE TABLE {table} USING iceberg PARTITIONED BY (days(timestamp)) AS SELECT * FROM {src}")
    try:
        held = spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").first()[0]
        sql = f"SELECT _id, timestamp FROM {table} VERSION AS OF {held}"
        expected = result_checksum(spark.sql(sql).collect())
        old_files = data_files(spark, table)
        spark.sql(
            f"CALL {cat}.system.rewrite_data_files(table => '{short}', options => map('rewrite-all', 'true'))"
        )
        assert data_files(spark, table).isdisjoint(old_files)  # the old snapshot's files are not current
        assert data_files(spark, table, held) == old_files
        assert result_checksum(spark.sql(sql).collect()) == expected  # time travel, while retained

        reader = spark.sql(sql)  # a long query that planned on the old snapshot: its splits are fixed
        for scan in scan_nodes(reader._jdf.queryExecution().executedPlan()):
            scan.inputRDD().partitions()
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
        spark.sql(
            f"CALL {cat}.system.expire_snapshots(table => '{short}', "
            f"older_than => TIMESTAMP '{now}', retain_last => 1)"
        )
        assert spark.sql(f"SELECT count(*) FROM {table}.snapshots").first()[0] == 1
        assert not any(Path(urlparse(f).path).exists() for f in old_files)  # expiry deleted them
        with pytest.raises(Py4JJavaError, match="(?i)not (exist|found)"):
            reader.collect()
        with pytest.raises(Exception, match="(?i)cannot find snapshot"):
            spark.sql(sql).collect()
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {table} PURGE")


def test_retention_shorter_than_the_longest_query_is_warned():
    assert snapshot_expiry.retention_warning(None, 5_000) is None  # nothing expired
    assert snapshot_expiry.retention_warning(10.0, 5_000) is None
    warning = snapshot_expiry.retention_warning(2.0, 5_000)
    assert warning is not None and "2.0 s of commits" in warning and "(5.0 s)" in warning


def test_the_replay_reads_each_commit_as_its_snapshot_added_it(ctx, tiny):
    """The dataset's snapshots in commit order (the parent chain), and a table whose snapshots are
    not its commits refused in one line before anything is written."""
    table = tiny.dataset.iceberg_table
    chain = snapshot_expiry.commit_snapshots(ctx.spark, table)
    parents = dict(ctx.spark.sql(f"SELECT snapshot_id, parent_id FROM {table}.snapshots").collect())
    assert len(chain) == tiny.dataset.config.commits and sorted(chain) == sorted(parents)
    assert [parents[s] for s in chain] == [None, *chain[:-1]]
    wrong = replace(
        tiny, dataset=replace(tiny.dataset, config=tiny.dataset.config.model_copy(update={"commits": 7}))
    )
    with pytest.raises(UserError, match=r"has 6 snapshots, not the 7 commits"):
        snapshot_expiry.replay(ctx.spark, wrong, "unused", None, "", Path("unused"), False)  # type: ignore[arg-type]
