"""`--apply` killed at each of its statements leaves the table's properties as they were, once the
next doctor run has read its journal (`icelab/health/journal.py`): the apply runs in a process of
its own, SIGKILLed by a failpoint (`ICELAB_KILL_AT=doctor.apply:N`, before the Nth statement: 1,
setting the target; 2, the rewrite; 3, the restoring statement), and the next run, in this
process, finishes it first."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.datagen.spark_sql_shapes import fragmented
from icelab.health import journal
from tests.tools.test_doctor import killed, main
from tests.warehouses import own_warehouse

CATALOG = "journal_t"
REPO = Path(__file__).resolve().parents[2]
TARGET = "commit.manifest.target-size-bytes"


def properties(spark, table: str) -> dict[str, str]:
    """The table's properties (not Spark's report of its current snapshot, which a rewrite moves)."""
    shown = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}
    return {k: v for k, v in shown.items() if k != "current-snapshot-id"}


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "journal", CATALOG)


@pytest.mark.parametrize(
    "nth", [1, 2, 3], ids=["before the target is set", "before the rewrite", "before the restore"]
)
def test_a_killed_apply_is_put_back_by_the_next_run(ctx, warehouse, tmp_path, nth, capsys):
    spark, name = ctx.spark, f"killed_{nth}"
    table_dir = fragmented(spark, CATALOG, warehouse, name, appends=6, days=5)
    spark.sql(f"ALTER TABLE {CATALOG}.db.{name} SET TBLPROPERTIES ('{TARGET}'='4194304')")
    before = properties(spark, f"{CATALOG}.db.{name}")
    results = tmp_path / "results"
    args = [str(table_dir), "--apply", "--measure-plans", "0", "--results", str(results)]
    proc = killed(args, f"doctor.apply:{nth}")
    assert proc.returncode == -9, proc.stderr[-2000:]
    journals = list((results / journal.DIRECTORY).glob("*.json"))
    assert len(journals) == 1  # fsynced before the first change, still there after the kill
    spark.sql(f"REFRESH TABLE {CATALOG}.db.{name}")
    if nth > 1:  # killed after the target was set: the kill left it changed
        assert properties(spark, f"{CATALOG}.db.{name}")[TARGET] != before[TARGET]
    # The next run (a dry run, here) finishes the earlier one first, and says so in one line.
    capsys.readouterr()
    main([str(table_dir), "--measure-plans", "0", "--results", str(results)])
    err = capsys.readouterr().err
    assert "did not finish; putting back what it changed first" in err
    spark.sql(f"REFRESH TABLE {CATALOG}.db.{name}")
    assert properties(spark, f"{CATALOG}.db.{name}") == before
    assert not list((results / journal.DIRECTORY).glob("*.json"))


def test_a_failed_rewrite_still_puts_the_target_back(ctx, warehouse, tmp_path, monkeypatch, capsys):
    # The rewrite fails (an OutOfMemoryError thrown in the JVM as it starts): the restoring
    # statement after it still runs, and the journal goes with it.
    spark, name = ctx.spark, "failed_rewrite"
    table_dir = fragmented(spark, CATALOG, warehouse, name, appends=6, days=5)
    before = properties(spark, f"{CATALOG}.db.{name}")
    results = tmp_path / "results"
    monkeypatch.setenv("ICELAB_OOM_AT", "doctor.statement:2")
    code = main([str(table_dir), "--apply", "--measure-plans", "0", "--results", str(results)])
    # One line and exit 3: the doctor could not finish checking the table.
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and [line for line in err if line.startswith("icelab: cannot check")], err[-5:]
    spark.sql(f"REFRESH TABLE {CATALOG}.db.{name}")
    assert properties(spark, f"{CATALOG}.db.{name}") == before
    assert not list((results / journal.DIRECTORY).glob("*.json"))
