"""The doctor safe on shapes that misled it (issue 73): a null time partition no window opens
does not decide the verdict, and a copy that shares the original's location gets no orphan
statement (remove_orphan_files there would list the original's live files)."""

from __future__ import annotations

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
    assert state["unwindowed"] == [{"partition": "ts_day=null", "files": 10, "exact": 10, "bounds": 10}]
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
    # (never deleting files), so the original's manifest lists, in the location both share, look
    # orphaned from the copy.
    code, report, _, out = doctor(
        capsys, results, str(warehouse / "db" / "orphaned"), "--copy", "--retain", "0s"
    )
    original, copy = report["states"]
    assert copy["state"] == "after_apply (copy)"
    assert copy["orphans"]["shared"].startswith("a copy registered from another table's metadata")
    statements = [s for s in copy["advice"]["statements"] if s["action"] == "remove_orphans"]
    assert statements == [] and "orphans not advised" in " ".join(copy["advice"]["notes"])
    assert "not counted: a copy registered" in out
    assert "shared" not in original["orphans"]
