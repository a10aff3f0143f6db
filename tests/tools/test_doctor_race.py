"""A real commit conflict on the doctor's rewrite: another writer commits between the rewrite's
plan and its commit. Iceberg refreshes the table before it writes a commit's manifest list and
commits the new metadata file after, so the writer's INSERT runs (on another thread of this
session, waited for) while the rewrite's first manifest list is being created: the table's
catalog reads and writes through tests/tools/RacingFileIO.java (`io-impl`), armed by the test.
With Iceberg's retries the rewrite commits on top of the writer's commit; with
`commit.retry.num-retries=0` it fails, and the doctor says so in one line and exits 5."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core import javac
from icelab.datagen.spark_sql_shapes import START_S, fragmented
from icelab.health import journal
from icelab.health.diagnosis import EXIT_LOST_RACE
from tests.tools.test_doctor import doctor, main, outcome
from tests.tools.test_doctor_journal import properties
from tests.warehouses import own_warehouse

CATALOG = "race_t"
SOURCE = Path(__file__).with_name("RacingFileIO.java")
PACKAGE = "icelab.tests"
TARGET = "commit.manifest.target-size-bytes"


@pytest.fixture(scope="module")
def racing(ctx):
    """RacingFileIO's class, compiled and loaded where Iceberg loads a catalog's `io-impl` from."""
    spark = ctx.spark
    classes = javac.compiled([SOURCE], PACKAGE, "tests' racing FileIO", ctx.engine.iceberg_jar)
    # Iceberg's classes came with spark.jars: Spark's class loader, which takes more URLs.
    loader = spark._jvm.org.apache.iceberg.hadoop.HadoopFileIO().getClass().getClassLoader()
    loader.addURL(spark._jvm.java.io.File(str(classes)).toURI().toURL())
    cls = loader.loadClass(f"{PACKAGE}.{SOURCE.stem}")
    gateway = spark.sparkContext._gateway
    calls = {
        name: javac.static_method(gateway, cls, name, *types)
        for name, types in (
            ("arm", ("java.lang.String", "java.lang.String")),
            ("disarm", ()),
            ("ran", ()),
            ("triggeredBy", ()),
        )
    }
    yield calls
    calls["disarm"]()


@pytest.fixture(scope="module")
def warehouse(ctx, racing, tmp_path_factory) -> Path:
    """A Hadoop catalog of this module's own whose tables read and write through RacingFileIO."""
    path = own_warehouse(ctx, tmp_path_factory, "race", CATALOG)
    ctx.spark.conf.set(f"spark.sql.catalog.{CATALOG}.io-impl", f"{PACKAGE}.{SOURCE.stem}")
    return path


def insert(table: str, first_id: int = 9_000_000, rows: int = 5) -> str:
    """The other writer's commit: `rows` rows on the table's first day."""
    return (
        f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + id % 60), concat('w', id) "
        f"FROM range({first_id}, {first_id + rows})"
    )


def history(spark, table: str) -> list[tuple[int, int | None, str, str]]:
    """Every snapshot: id, parent, operation, manifest list file name; oldest first."""
    rows = spark.sql(
        f"SELECT snapshot_id, parent_id, operation, manifest_list FROM {table}.snapshots "
        "ORDER BY committed_at"
    ).collect()
    return [(r.snapshot_id, r.parent_id, r.operation, r.manifest_list.rsplit("/", 1)[-1]) for r in rows]


def count(spark, table: str) -> int:
    return spark.sql(f"SELECT count(*) FROM {table}").first()[0]


def test_a_writer_committing_inside_the_rewrite_is_retried_past(ctx, racing, warehouse, results, capsys):
    spark, table = ctx.spark, f"{CATALOG}.db.retried"
    where = fragmented(spark, CATALOG, warehouse, "retried", appends=4, days=3)
    before, rows, snaps = properties(spark, table), count(spark, table), history(spark, table)
    ran = racing["ran"]()
    racing["arm"]("snap-", insert(table))
    try:
        code, report, _, out = doctor(capsys, results, str(where), "--apply")
    finally:
        racing["disarm"]()
    assert racing["ran"]() == ran + 1, out
    commits = report["commits"]
    ours = commits["rewrite"]
    assert ours is not None, out
    # The writer's INSERT ran while the rewrite's first manifest list was being created: after
    # Iceberg's refresh, before the commit. The rewrite's first attempt lost the race, and its
    # second (snap-<id>-2-...) committed on top of the writer's append.
    assert Path(racing["triggeredBy"]()).name.startswith(f"snap-{ours['snapshot_id']}-1-")
    (writer,) = commits["others_before_rewrite"]
    assert writer["operation"] == "append" and writer["summary"]["added-records"] == "5"
    assert (writer["parent_id"], ours["parent_id"]) == (snaps[-1][0], writer["snapshot_id"])
    now = history(spark, table)
    assert now[: len(snaps)] == snaps and [s[0] for s in now[len(snaps) :]] == [
        writer["snapshot_id"],
        ours["snapshot_id"],
    ]
    assert now[-1][3].startswith(f"snap-{ours['snapshot_id']}-2-")
    assert report["lost_race"] is None
    assert "by other writers while --apply ran" in out and "before the rewrite  " in out
    assert [s["state"] for s in report["states"]] == ["current", "before_rewrite", "after_apply"]
    # The writer's rows are in; the target is put back.
    assert count(spark, table) == rows + 5
    assert properties(spark, table) == before
    assert code in (0, 1)


def test_a_rewrite_with_no_retry_left_says_it_lost_in_one_line(ctx, racing, warehouse, results, capsys):
    spark, table = ctx.spark, f"{CATALOG}.db.lost"
    where = fragmented(spark, CATALOG, warehouse, "lost", appends=4, days=3)
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('commit.retry.num-retries'='0', '{TARGET}'='4194304')")
    before, rows, snaps = properties(spark, table), count(spark, table), history(spark, table)
    ran = racing["ran"]()
    racing["arm"]("snap-", insert(table))
    capsys.readouterr()
    try:
        code = main([str(where), "--apply", "--results", str(results)])
    finally:
        racing["disarm"]()
    captured = capsys.readouterr()
    assert racing["ran"]() == ran + 1, captured.err[-3000:]
    # One line on stderr, no traceback, exit 5.
    err = [line for line in captured.err.splitlines() if line.strip()]
    assert code == EXIT_LOST_RACE and len(err) == 1, captured.err[-3000:]
    (line,) = err
    assert line.startswith(f"icelab: doctor {CATALOG}.db.lost: --apply lost a commit race"), line
    assert "commit.retry.num-retries=0 left no retry" in line and "Iceberg: " in line
    assert "the manifest target is back as it was" in line and "Traceback" not in captured.err
    # The table is as the writer left it: its append on the first read's snapshot, and nothing
    # of the rewrite's; the target put back, no journal left.
    now = history(spark, table)
    assert now[: len(snaps)] == snaps and [(s[1], s[2]) for s in now[len(snaps) :]] == [
        (snaps[-1][0], "append")
    ]
    assert count(spark, table) == rows + 5
    assert properties(spark, table) == before
    assert not list((results / journal.DIRECTORY).glob("*.json"))
    # The report records the lost race, and the commit that won it.
    _, report, _, out = outcome(code, captured.out)
    lost = report["lost_race"]
    assert (lost["action"], lost["retries"]) == ("rewrite_manifests", "0") and lost["iceberg"] in line
    assert [a["action"] for a in report["applied"]] == ["set_target", "restore_target"]
    assert [c["snapshot_id"] for c in report["commits"]["others_after_rewrite"]] == [now[-1][0]]
    assert report["exit_code"] == EXIT_LOST_RACE and len(report["states"]) == 1
    assert f"lost: {line.removeprefix('icelab: ')}" in out
