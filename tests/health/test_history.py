"""icelab.health.history: the commits read from a table plain Spark SQL wrote are the ones it ran,
in their order, with the days each added and its deletes; a manifest rewrite and a snapshot
expiry keep them (only the commit times go with the expired snapshots)."""

from __future__ import annotations

import pytest

from icelab.datagen import spark_sql_shapes as shapes
from icelab.health import reader
from icelab.health.history import read_commits
from icelab.health.ingest_model import TooShort, fit
from icelab.health.source import connect, load, resolve
from tests.warehouses import own_warehouse

CATALOG = "history_t"
# The days each INSERT adds data to, in the order they run: five days one by one, then a late
# commit to day 1 and one that adds day 5 and day 3 at once.
DAYS = [[0], [1], [2], [3], [4], [1], [5, 3]]


def insert(spark, table: str, days: list[int], first: int) -> None:
    """One commit: 10 rows on each of `days`, one file per day (a single task writes them)."""
    parts = " UNION ALL ".join(
        f"SELECT id, timestamp_seconds({shapes.START_S} + {d} * 86400 + id), concat('v', id) "
        f"FROM range({first + 10 * k}, {first + 10 * k + 10})"
        for k, d in enumerate(days)
    )
    spark.sql(f"INSERT INTO {table} SELECT /*+ COALESCE(1) */ * FROM ({parts})")


@pytest.fixture(scope="module")
def table(ctx, tmp_path_factory):
    warehouse = own_warehouse(ctx, tmp_path_factory, "history", CATALOG)
    name = shapes.create(ctx.spark, CATALOG, "events", {"write.delete.mode": "merge-on-read"})
    for i, days in enumerate(DAYS):
        insert(ctx.spark, name, days, 100 * i)
    ctx.spark.sql(f"DELETE FROM {name} WHERE id = 3")  # a position delete file, one commit
    flat = shapes.unpartitioned(ctx.spark, CATALOG, warehouse, "flat", appends=2)
    return name, str(shapes.table_dir(warehouse, "events")), str(flat)


def commits_of(ctx, where: str):
    source = connect(ctx.spark, ctx.engine, resolve(where))
    meta = reader.read(ctx.spark, source, load(ctx.spark, source))
    return read_commits(ctx.spark, source, meta), meta


def test_the_commits_are_the_inserts_in_their_order_with_their_days_and_the_delete(ctx, table):
    name, where, _ = table
    (commits, unit), meta = commits_of(ctx, where)
    ran = [
        r.snapshot_id
        for r in ctx.spark.sql(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at").collect()
    ]
    assert unit == "day" and [c.snapshot_id for c in commits] == ran
    start = shapes.START_S // 86_400
    data = [c for c in commits if c.entries]
    assert [sorted(c.units) for c in data] == [sorted(start + d for d in days) for days in DAYS]
    assert all(n == 1 for c in data for n in c.units.values())  # one file per day per commit
    assert [c.delete_entries for c in commits] == [0] * len(DAYS) + [1]
    assert all(c.committed_us is not None for c in commits)
    model = fit(commits, unit, meta.properties)
    # Late: day 1 in the sixth commit and day 3 in the seventh, 2 of the 8 files.
    assert model.late_share == pytest.approx(2 / 8) and model.late_lag_units.max == 3
    assert (model.commits, model.data_days, model.delete_commits) == (len(DAYS), 6, 1)
    assert model.merging and set(model.merge_defaults) == set(model.merge)


def test_a_manifest_rewrite_and_an_expiry_keep_the_commits_but_not_their_times(ctx, table):
    _, where, _ = table
    (before, _), _ = commits_of(ctx, where)
    ctx.spark.sql(f"CALL {CATALOG}.system.rewrite_manifests('db.events')")
    # Every snapshot older than a moment past them all, but the current one.
    expire = "table => 'db.events', older_than => TIMESTAMP '2100-01-01 00:00:00', retain_last => 1"
    ctx.spark.sql(f"CALL {CATALOG}.system.expire_snapshots({expire})")
    (after, _), meta = commits_of(ctx, where)
    assert len(meta.snapshots) == 1
    assert [(c.snapshot_id, c.units, c.delete_entries) for c in after] == [
        (c.snapshot_id, c.units, c.delete_entries) for c in before
    ]
    assert all(c.committed_us is None for c in after)


def test_an_unpartitioned_table_has_no_timeline(ctx, table):
    source = connect(ctx.spark, ctx.engine, resolve(table[2]))
    meta = reader.read(ctx.spark, source, load(ctx.spark, source))
    with pytest.raises(TooShort, match="no time partition field"):
        read_commits(ctx.spark, source, meta)
