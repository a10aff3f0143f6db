"""The doctor's gates on tables plain Spark SQL wrote: the simulated rewrite cuts a task where
Iceberg's rolling writer cuts it (at 1.2 x target, checked every 250 entries), a window planned
from more manifests after a rewrite is slower whatever a model predicts, and an aligned table (no
partition planned from more than one manifest) is already fine, so the doctor calls it healthy."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from icelab.core.config import manifest_health_rules
from icelab.health import reader
from icelab.health.check import Health, Policy, examine
from icelab.health.gain import already_fine, slower
from icelab.health.reader import DATA, Metadata
from icelab.health.rewrite import simulate, sizes
from icelab.health.source import connect, load, resolve
from tests.warehouses import own_warehouse

CATALOG = "gates_t"
TARGET = "commit.manifest.target-size-bytes"
DAY0 = 1_767_225_600  # 2026-01-01 00:00:00 UTC, in seconds
# Iceberg 1.10's RewriteManifestsSparkAction rolls a manifest at (long) (1.2 * target), and its
# RollingManifestWriter checks the written length every 250 entries. Stated here, not read off
# icelab.health.rewrite: these tests hold the simulation to Iceberg's numbers.
ICEBERG_ROLL = 1.2
ROLL_CHECK = 250
WINDOWS = ("1d", "full")


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    """A Hadoop catalog of the tests' own, for tables icelab did not create."""
    return own_warehouse(ctx, tmp_path_factory, "gates", CATALOG)


def _create(spark, name: str, columns: str = "", properties: dict[str, str] | None = None) -> str:
    """A table (id, ts, v or `columns`) partitioned by day, manifest merging off."""
    table = f"{CATALOG}.db.{name}"
    props = {"commit.manifest-merge.enabled": "false", **(properties or {})}
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, {columns or 'v string'}) USING iceberg "
        "PARTITIONED BY (days(ts)) TBLPROPERTIES ("
        + ", ".join(f"'{k}'='{v}'" for k, v in props.items())
        + ")"
    )
    return table


def _read(ctx, warehouse: Path, name: str) -> Metadata:
    """The table's metadata as the doctor reads it."""
    source = connect(ctx.spark, ctx.engine, resolve(str(warehouse / "db" / name)))
    return reader.read(ctx.spark, source, load(ctx.spark, source), None, ctx.engine.iceberg_jar)


def _examine(meta: Metadata) -> Health:
    return examine(meta, "now", "gates", Policy(rules=manifest_health_rules(), windows=WINDOWS))


def _entries(spark, table: str) -> list[int]:
    """Live entries of each data manifest now, as Iceberg's manifests table counts them (sorted)."""
    rows = spark.sql(
        f"SELECT added_data_files_count + existing_data_files_count AS n FROM {table}.manifests "
        "WHERE content = 0"
    ).collect()
    return sorted(r.n for r in rows)


def _rewrite(spark, table: str, target: int) -> None:
    """Iceberg's own rewrite_manifests at `target` bytes."""
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('{TARGET}'='{target}')")
    name = table.removeprefix(f"{CATALOG}.")
    spark.sql(f"CALL {CATALOG}.system.rewrite_manifests(table => '{name}')").collect()


def test_a_target_that_spreads_a_window_over_more_manifests_is_slower(ctx, warehouse):
    # One load of 60 days: one manifest, every day in it. A target a byte below it asks for two
    # manifests of 30 days each: the whole span is then planned from two, a day still from one.
    spark = ctx.spark
    table = _create(spark, "bulk")
    spark.sql(
        f"INSERT INTO {table} SELECT id, timestamp_seconds({DAY0} + (id % 60) * 86400 + 3600), "
        "concat('v', id) FROM range(0, 60)"
    )
    meta = _read(ctx, warehouse, "bulk")
    (length,) = meta.manifests.length[meta.manifests.content == DATA]
    target = int(length) - 1
    sim = simulate(meta, target)
    assert sim.changes and sim.tasks == 2 and sorted(sim.rewritten.entries) == [30, 30]
    now = {w["window"]: w["manifests"] for w in _examine(meta).windows}
    after = {
        w["window"]: w["manifests"]
        for w in _examine(dataclasses.replace(meta, manifests=sim.manifests)).windows
    }
    assert now == {"1d": 1, "full": 1} and after == {"1d": 1, "full": 2}
    pairs = {
        name: {"window": name, "now_manifests": now[name], "after_manifests": after[name]} for name in WINDOWS
    }
    # No model fitted, or one that predicts nothing for the window: more manifests is slower.
    assert slower(pairs["full"], modelled=False) and slower(pairs["full"], modelled=True)
    assert not slower(pairs["1d"], modelled=False)
    # Iceberg's own rewrite at that target plans the whole span from two manifests too.
    _rewrite(spark, table, target)
    real = {w["window"]: w["manifests"] for w in _examine(_read(ctx, warehouse, "bulk")).windows}
    assert real == after


def test_more_manifests_is_slower_even_when_the_model_predicts_a_gain():
    window = {
        "window": "7d",
        "now_manifests": 2,
        "after_manifests": 3,
        "now_ms": 10.0,
        "gain_ms": 5.0,  # the model predicts 5 ms saved, well outside its error
        "error_ms": 1.0,
    }
    assert slower(window, modelled=True) and slower(window, modelled=False)
    assert not slower(window | {"after_manifests": 2}, modelled=True)


def test_an_aligned_table_is_already_fine_and_the_doctor_calls_it_healthy(ctx, warehouse, results, capsys):
    # One append a day for five days, merging off: each day in a manifest of its own.
    spark = ctx.spark
    table = _create(spark, "aligned")
    for day in range(5):
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({DAY0} + {day} * 86400 + id * 3600), "
            f"concat('v', id) FROM range({day * 4}, {day * 4 + 4})"
        )
    meta = _read(ctx, warehouse, "aligned")
    h = _examine(meta)
    assert len(h.data_manifests) == 5 and len(h.live_partitions) == 5
    assert int(h.live_partitions.bounds.max()) == 1
    why = already_fine(h, meta)
    assert why is not None and why.startswith("aligned"), why
    # Imported here: the other tests of this module need no more than icelab.health.
    from tests.tools.test_doctor import doctor

    code, report, _, out = doctor(capsys, results, str(warehouse / "db" / "aligned"))
    state = report["states"][0]
    assert code == 0 and report["verdict"] == "healthy" and report["actions"] == []
    assert state["manifests"] == 5 and state["why"] == why and f"why: {why}" in out


def test_a_task_past_the_roll_limit_is_cut_where_iceberg_cuts_it(ctx, warehouse):
    # 260 files in one day (two appends: 250 and 10), so one task of the rewrite holds them all
    # (a partition is never split). Each file's 20 strings of 2,000 characters give its entry
    # about 80 kB of bounds (metrics `full`), above Avro's 64,000-byte block: every entry is a
    # block of its own, so the length the rolling writer checks counts every entry written.
    spark = ctx.spark
    columns = ", ".join(f"s{i} string" for i in range(20))
    table = _create(
        spark,
        "wide",
        columns,
        {"write.distribution-mode": "none", "write.metadata.metrics.default": "full"},
    )
    values = ", ".join(f"repeat(char({65 + i}), 2000)" for i in range(20))
    for files in (ROLL_CHECK, 10):
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({DAY0} + 3600), {values} "
            f"FROM range(0, {files}, 1, {files})"
        )
    meta = _read(ctx, warehouse, "wide")
    data = meta.manifests[meta.manifests.content == DATA]
    assert sorted(data.entries) == [10, ROLL_CHECK] and len(meta.partitions) == 1
    # A target whose 1.2 x holds 249.6 entries by the table's size line (which runs through its
    # 250-entry manifest): the simulation cuts the task there, 249.6 and 10.4 entries, rounded to
    # 250 and 10. Iceberg's writer, at its check after 250 entries, has written at least the bytes
    # of the 250-entry manifest (the same entries, as EXISTING with their sequence numbers), over
    # 1.2 x target: it rolls there too.
    line = sizes(data)
    target = math.ceil((line.overhead + (ROLL_CHECK - 0.4) * line.per_entry) / ICEBERG_ROLL)
    # The one task's 260 entries are above 1.2 x target and below 3 x target.
    assert ICEBERG_ROLL * target < line.of(260) < 3 * target

    sim = simulate(meta, target)
    assert sim.changes and sim.tasks == 2
    simulated = sorted(int(n) for n in sim.rewritten.entries)
    _rewrite(spark, table, target)
    real = _entries(spark, table)
    assert simulated == real == [10, ROLL_CHECK], (simulated, real)
