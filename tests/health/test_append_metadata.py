"""icelab.health.append_metadata: a horizon's commits appended to a scratch copy are read back
from the copy's history as drawn, a window prunes the new entries by their unit, the copy's merge
settings act on them, and the table itself is left as it was."""

from __future__ import annotations

import pytest

from icelab.datagen import spark_sql_shapes as shapes
from icelab.health import reader, scratch
from icelab.health.append_metadata import append
from icelab.health.check import time_field
from icelab.health.future import draw
from icelab.health.history import read_commits
from icelab.health.ingest_model import fit
from icelab.health.source import connect, load, resolve
from tests.warehouses import own_warehouse

CATALOG = "future_t"
HORIZON_DAYS = 6


@pytest.fixture(scope="module")
def table(ctx, tmp_path_factory):
    """Ten daily commits of 10 rows, merging off, one file per day; every third also adds the day
    before."""
    warehouse = own_warehouse(ctx, tmp_path_factory, "future", CATALOG)
    name = shapes.create(ctx.spark, CATALOG, "events", {"commit.manifest-merge.enabled": "false"})
    for d in range(10):
        days = [d, d - 1] if d % 3 == 2 else [d]
        ts = f"timestamp_seconds({shapes.START_S} + %d * 86400 + id)"
        rows = " UNION ALL ".join(
            f"SELECT id, {ts % day}, 'v' FROM range({100 * d}, {100 * d + 10})" for day in days
        )
        ctx.spark.sql(f"INSERT INTO {name} SELECT /*+ COALESCE(1) */ * FROM ({rows})")
    return shapes.table_dir(warehouse, "events")


def planned_files(ctx, jtable, since_us: int) -> list[str]:
    """The data files Iceberg plans for `ts >= since` (partition and metrics pruning both)."""
    expr = ctx.spark._jvm.org.apache.iceberg.expressions.Expressions.greaterThanOrEqual("ts", since_us)
    tasks = jtable.newScan().filter(expr).planFiles()
    found, it = [], tasks.iterator()
    while it.hasNext():
        found.append(str(it.next().file().path()))
    tasks.close()
    return found


def visit(ctx, source):
    jtable = load(ctx.spark, source)
    meta = reader.read(ctx.spark, source, jtable)
    return jtable, meta


def copy_with_future(ctx, where, tmp_path, properties=None):
    """A scratch copy of the table with the horizon's commits appended: (copy, drawn, ids, meta)."""
    source = connect(ctx.spark, ctx.engine, resolve(str(where)))
    jtable, meta = visit(ctx, source)
    commits, unit = read_commits(ctx.spark, source, meta)
    drawn = draw(commits, fit(commits, unit, meta.properties), HORIZON_DAYS, seed=5)
    copy = scratch.open_copy(ctx.spark, ctx.engine, source, jtable, meta.metadata_file, tmp_path / "scratch")
    for k, v in (properties or {}).items():
        ctx.spark.sql(f"ALTER TABLE {copy.source.name} SET TBLPROPERTIES ('{k}'='{v}')")
    copy.jtable.refresh()
    ids = append(ctx.spark, copy, time_field(meta)[1], drawn, seed=5)
    return copy, commits, drawn, ids


def test_the_copys_history_is_the_tables_then_the_drawn_commits_and_the_table_is_untouched(
    ctx, table, tmp_path
):
    before = scratch.tree(table)
    copy, commits, drawn, ids = copy_with_future(ctx, table, tmp_path)
    try:
        _, meta = visit(ctx, copy.source)
        after, _ = read_commits(ctx.spark, copy.source, meta)
        assert [c.units for c in after] == [c.units for c in commits] + [c.units for c in drawn]
        assert [c.snapshot_id for c in after[len(commits) :]] == ids and len(set(ids)) == len(drawn)
        manifests = ctx.spark.sql(f"SELECT count(*) FROM {copy.source.name}.manifests").first()[0]
        assert manifests == len(commits) + len(drawn)  # merging off: one manifest per append
        # A window from the horizon's third day on plans the drawn entries of those days only.
        head = max(max(c.units) for c in commits)
        start_s = (head + 3) * 86_400
        kept = sum(n for c in drawn for u, n in c.units.items() if u >= head + 3)
        # Each new entry's time bounds lie in its own day, as a real file's would.
        day = "partition.ts_day"
        off = ctx.spark.sql(
            f"SELECT count(*), count_if(NOT coalesce(to_date(readable_metrics.ts.lower_bound) = {day}"
            f" AND to_date(readable_metrics.ts.upper_bound) = {day}, false)) "
            f"FROM {copy.source.name}.files WHERE file_path LIKE '%icelab-future%'"
        ).first()
        assert tuple(off) == (sum(c.entries for c in drawn), 0)
        planned = planned_files(ctx, copy.jtable, start_s * 1_000_000)
        assert len(planned) == kept > 0
        assert all("/data/icelab-future/" in p and p.startswith(copy.source.location) for p in planned)
    finally:
        copy.remove()
    assert scratch.traces(before, scratch.tree(table)) == []


def test_the_copys_merge_settings_act_on_the_appended_commits(ctx, table, tmp_path):
    props = {"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "3"}
    copy, commits, drawn, _ = copy_with_future(ctx, table, tmp_path, props)
    try:
        manifests = ctx.spark.sql(f"SELECT count(*) FROM {copy.source.name}.manifests").first()[0]
        assert manifests < 3 < len(commits) + len(drawn)
    finally:
        copy.remove()
