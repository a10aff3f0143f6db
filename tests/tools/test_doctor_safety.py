"""The doctor safe on shapes that misled it (issue 73): a null time partition no window opens
does not decide the verdict, and a copy that shares the original's location gets no orphan
statement (remove_orphan_files there would list the original's live files)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.tools.test_doctor import doctor
from tests.tools.test_doctor_verdict import DAY0
from tests.warehouses import own_warehouse

CATALOG = "safety_t"


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "safety", CATALOG)


def _daily(spark, name: str, days: int, nulls: bool) -> None:
    """One insert per day, merging off: each day's partition in one manifest (aligned); with
    `nulls`, each insert also writes a row whose ts is null, so the null partition is in all."""
    table = f"{CATALOG}.db.{name}"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, v string) USING iceberg PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('commit.manifest-merge.enabled'='false')"
    )
    for d in range(days):
        null_row = f" UNION ALL SELECT {d + 10_000}, CAST(NULL AS timestamp), 'n'" if nulls else ""
        spark.sql(
            f"INSERT INTO {table} SELECT {d}, timestamp_seconds({DAY0 + d * 86400 + 3600}), 'v'{null_row}"
        )


def test_a_null_time_partition_is_reported_apart_and_does_not_decide(ctx, warehouse, results, capsys):
    # Ten daily inserts, and a rule that needs a rewrite past 8 manifests a partition (the default's
    # 32 would need 33 inserts): the null partition alone, in all 10 manifests, would trip it.
    _daily(ctx.spark, "with_nulls", 10, nulls=True)
    _daily(ctx.spark, "without_nulls", 10, nulls=False)
    rule = ("--rule", "bounds_max=4:8")
    _, plain, _, _ = doctor(capsys, results, str(warehouse / "db" / "without_nulls"), *rule)
    code, report, _, out = doctor(capsys, results, str(warehouse / "db" / "with_nulls"), *rule)
    state = report["states"][0]
    assert plain["verdict"] == "healthy"
    # The null partition is in all 10 manifests: named apart, left out of the statistics.
    assert state["unwindowed"] == [
        {"partition": "ts_day=null", "why": "null", "files": 10, "exact": 10, "bounds": 10}
    ]
    assert "no window      ts_day=null: 10 data files in 10 manifests" in out
    assert state["stats"]["bounds"]["max"] == 1.0
    assert code == 0 and report["verdict"] == "healthy", state["why"]


def test_a_copy_gets_no_orphan_statement_and_says_why(ctx, warehouse, results, capsys):
    spark, table = ctx.spark, f"{CATALOG}.db.orphaned"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, v string) USING iceberg PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('commit.manifest-merge.enabled'='false')"
    )
    for j in range(8):
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({DAY0} + id * 86400), 'v' "
            f"FROM range({j}, {j + 20})"
        )
    # --retain 0s: expiry on the copy drops every snapshot but the newest from the copy's metadata
    # (never deleting files); --keep-copy leaves the copy to look at afterwards.
    code, report, _, out = doctor(
        capsys, results, str(warehouse / "db" / "orphaned"), "--copy", "--keep-copy", "--retain", "0s"
    )
    original, copy = report["states"]
    assert copy["state"] == "after_apply (copy)"
    assert copy["orphans"]["shared"].startswith("a scratch copy")
    statements = [s for s in copy["advice"]["statements"] if s["action"] == "remove_orphans"]
    assert statements == [] and "orphans not advised" in " ".join(copy["advice"]["notes"])
    assert "not counted: a scratch copy" in out
    assert "shared" not in original["orphans"]
    # What was run on the copy deleted no file the original references.
    expiry = [a["text"] for a in report["applied"] if a["action"] == "expire_snapshots"]
    assert len(expiry) == 1 and "cleanExpiredFiles(False)" in expiry[0]
    referenced = _referenced(spark, table)
    assert referenced and all(Path(p).exists() for p in referenced)
    # The copy's location is its own: an orphan listing on it, everything aged past the procedure's
    # limit of a day, names files under the copy's directory only, none of the original's.
    kept = Path(report["scratch"]["directory"])
    aged = time.time() - 4 * 86400
    for p in [*(warehouse / "db" / "orphaned").rglob("*"), *kept.rglob("*")]:
        os.utime(p, (aged, aged))
    catalog, copy_ident = report["copy"].split(".", 1)
    listed = {
        _local(r[0])
        for r in spark.sql(
            f"CALL {catalog}.system.remove_orphan_files(table => '{copy_ident}', dry_run => true)"
        ).collect()
    }
    assert not listed & referenced and all(p.startswith(str(kept)) for p in listed), listed


def _local(uri: str) -> str:
    return uri.removeprefix("file:").replace("///", "/").replace("//", "/")


def _referenced(spark, table: str) -> set[str]:
    """Every file the table's metadata references: data files, manifests and manifest lists of
    every snapshot, and its current metadata file."""
    paths = [r[0] for r in spark.sql(f"SELECT file_path FROM {table}.all_data_files").collect()]
    paths += [r[0] for r in spark.sql(f"SELECT path FROM {table}.all_manifests").collect()]
    paths += [r[0] for r in spark.sql(f"SELECT manifest_list FROM {table}.snapshots").collect()]
    paths += [r[0] for r in spark.sql(f"SELECT file FROM {table}.metadata_log_entries").collect()]
    return {_local(p) for p in paths}


def test_a_copy_the_user_registered_deletes_nothing_of_the_original(ctx, warehouse, results, capsys):
    # A copy registered by hand (register_table on the original's metadata file) keeps the
    # original's location: the doctor finds the location shared, and its expiry, applied, drops
    # snapshots from the copy's metadata only.
    spark, table = ctx.spark, f"{CATALOG}.db.registered"
    _daily(spark, "registered", 6, nulls=False)
    current = spark.sql(
        f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
    ).first()[0]
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG}.db.registered_by_hand")
    spark.sql(
        f"CALL {CATALOG}.system.register_table(table => 'db.registered_by_hand', "
        f"metadata_file => '{current}')"
    ).collect()
    code, report, _, out = doctor(
        capsys, results, str(warehouse / "db" / "registered_by_hand"), "--retain", "0s", "--apply"
    )
    state = report["states"][0]
    assert state["orphans"]["shared"].startswith("its metadata file is outside"), state["orphans"]
    expiry = [a["text"] for a in report["applied"] if a["action"] == "expire_snapshots"]
    assert len(expiry) == 1 and "cleanExpiredFiles(False)" in expiry[0], report["applied"]
    referenced = _referenced(spark, table)
    assert referenced and all(Path(p).exists() for p in referenced)


def test_partitions_older_than_every_window_are_reported_apart(ctx, warehouse, results, capsys):
    # 40 daily inserts, then 10 backfills into the 5 oldest days: each of those is in 11 manifests.
    # The windows (1d, 7d, 30d, ending at the newest day) open none of them.
    spark = ctx.spark
    _daily(spark, "backfilled", 40, nulls=False)
    for j in range(10):
        spark.sql(
            f"INSERT INTO {CATALOG}.db.backfilled SELECT {20_000 + j * 5} + d, "
            f"timestamp_seconds({DAY0} + d * 86400 + 7200), 'b' FROM (SELECT explode(sequence(0, 4)) AS d)"
        )
    rule = ("--rule", "bounds_max=4:8")
    code, report, _, out = doctor(capsys, results, str(warehouse / "db" / "backfilled"), *rule)
    state = report["states"][0]
    outside = [u for u in state["unwindowed"] if u["why"] == "outside"]
    assert [u["partition"] for u in outside] == [f"ts_day=2026-01-0{d}" for d in range(1, 10)] + [
        "ts_day=2026-01-10"
    ]
    assert max(u["bounds"] for u in outside) == 11
    assert "10 partitions outside every window (1d, 7d, 30d), ts_day=2026-01-01 .. ts_day=2026-01-10" in out
    assert state["stats"]["bounds"]["max"] == 1.0
    assert state["rule_verdict"] == "healthy", state["reasons"]
