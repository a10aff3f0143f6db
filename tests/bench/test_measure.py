"""measure(): planning apart from execution on real Parquet and Iceberg tables, with the
scan metrics each format reports, equal results, and failures recorded, not raised."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
from pyspark.sql import Row

from icelab.bench.measure import measure, plain_collect_ms, result_checksum
from icelab.core import failpoints
from icelab.core.contract import TIMED_OUT
from icelab.core.jvm import jvm_running
from tests.conftest import namespace

DAY = (
    "`date` = DATE'2026-06-01' AND timestamp >= TIMESTAMP'2026-06-01 00:00:00' "
    "AND timestamp < TIMESTAMP'2026-06-02 00:00:00'"
)


def count_sql(table: str) -> str:
    return f"SELECT count(*) FROM {table} WHERE {DAY}"


def test_iceberg_scan_metrics(ctx, tiny):
    table = tiny.dataset.iceberg_table
    m = measure(ctx.spark, count_sql(table))
    assert m.status == "ok", m.error
    assert m.rows_out == 1
    # The scan's metrics are the table's own: every manifest of the current snapshot, and the
    # data files (and their bytes) of the one day the filter keeps, from the files metadata table.
    manifests = ctx.spark.sql(f"SELECT count(*) FROM {table}.manifests").first()[0]
    day = ctx.spark.sql(
        f"SELECT count(*) AS n, sum(file_size_in_bytes) AS b FROM {table}.files "
        "WHERE partition.timestamp_day = DATE'2026-06-01'"
    ).first()
    assert m.scan["manifests_total"] == manifests == tiny.dataset.config.commits
    assert 0 < m.scan["manifests_scanned"] <= manifests
    assert (m.scan["files_scanned"], m.scan["bytes_scanned"]) == (day.n, day.b)
    assert "iceberg_planning_ms" in m.scan


def test_parquet_scan_metrics(ctx, tiny):
    m = measure(ctx.spark, count_sql(tiny.dataset.parquet_table))
    assert m.status == "ok", m.error
    assert m.scan["partitions_scanned"] == 1
    # Both tables hold one file per day per commit that brought rows of that day.
    iceberg = measure(ctx.spark, count_sql(tiny.dataset.iceberg_table), execute=False)
    assert m.scan["files_scanned"] == iceberg.scan["files_scanned"] >= 1


def test_same_answer_on_both_formats(ctx, tiny):
    nested = (
        "SELECT _id, web.webPageDetails.name FROM {t} WHERE "
        + DAY
        + " AND environment.geo.countryCode = 'DE'"
    )
    a = measure(ctx.spark, nested.format(t=tiny.dataset.iceberg_table))
    b = measure(ctx.spark, nested.format(t=tiny.dataset.parquet_table))
    assert a.status == b.status == "ok"
    assert a.result_checksum == b.result_checksum
    assert a.rows_out == b.rows_out > 0


def test_aggregate_pushdown_skips_the_scan(ctx, tiny):
    ctx.spark.conf.set("spark.sql.iceberg.aggregate-push-down.enabled", "true")
    try:
        m = measure(ctx.spark, f"SELECT count(*) FROM {tiny.dataset.iceberg_table}")
    finally:
        ctx.spark.conf.set("spark.sql.iceberg.aggregate-push-down.enabled", "false")
    assert m.status == "ok" and m.rows_out == 1
    assert "manifests_scanned" not in m.scan  # answered from metadata: no scan node at all


def test_failure_is_a_row_not_a_crash(ctx):
    m = measure(ctx.spark, "SELECT * FROM no_such_table")
    assert m.status == "error" and "no_such_table" in m.error.lower()
    assert m.planning_ms is None and m.as_row()["status"] == "error"


def test_whole_numbers_hash_alike_whatever_their_type():
    from decimal import Decimal

    assert result_checksum([(3,)]) == result_checksum([(3.0,)]) == result_checksum([(Decimal("3.00"),)])
    assert result_checksum([(0.1 + 0.2,)]) == result_checksum([(0.3,)])  # six significant digits
    assert result_checksum([(1234567,)]) != result_checksum([(1234567.0,)])  # ints are never rounded
    assert result_checksum([(True,)]) != result_checksum([(1,)])


def test_result_checksum_ignores_order():
    assert result_checksum([(1, "a"), (2, "b")]) == result_checksum([(2, "b"), (1, "a")])
    assert result_checksum([(1, "a")]) != result_checksum([(1, "b")])


def test_plan_only_reads_no_data_but_keeps_scan_metrics(ctx, tiny):
    m = measure(ctx.spark, count_sql(tiny.dataset.iceberg_table), execute=False)
    assert m.status == "ok" and m.planning_ms > 0
    assert not m.executed and m.execution_ms is None and m.rows_out is None
    assert m.scan_nodes == 1 and m.scan["manifests_scanned"] >= 1


def test_checksum_is_the_same_for_sparks_and_duckdbs_forms_of_a_row():
    instant = dt.datetime(2026, 6, 29, 12, 30, tzinfo=dt.timezone.utc)
    # PySpark: Row for structs, naive local datetimes, Decimal or float sums in its own order.
    spark = Row(
        n=3,
        s=Row(x=0.1 + 0.2, y="k"),
        m={"b": [Row(id="1")], "a": []},
        t=instant.astimezone().replace(tzinfo=None),
    )
    # DuckDB: dicts for structs and maps, aware datetimes, its own rounding.
    duck = (3, {"y": "k", "x": 0.3}, {"a": [], "b": [{"id": "1"}]}, instant)
    assert result_checksum([spark]) == result_checksum([duck])
    assert result_checksum([spark, duck]) == result_checksum([duck, spark])  # order-insensitive
    assert result_checksum([duck]) != result_checksum([(3, {"y": "k", "x": 0.31}, {}, instant)])


@pytest.fixture(scope="module")
def reported(ctx, tiny):
    """The tiny Iceberg table through a second catalog whose Iceberg metrics reporter keeps the
    last ScanReport (InMemoryMetricsReporter): one new report object per planning of a scan."""
    name = "ice_reported"
    prefix = f"spark.sql.catalog.{name}"
    for key, value in {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": tiny.dataset.warehouse_uri,
        f"{prefix}.cache-enabled": "false",
        f"{prefix}.metrics-reporter-impl": "org.apache.iceberg.metrics.InMemoryMetricsReporter",
    }.items():
        ctx.spark.conf.set(key, value)
    table = f"{name}.bench.events"
    ctx.spark.sql(f"SELECT * FROM {table} LIMIT 0").collect()  # loads the catalog
    jvm = ctx.spark._jvm
    catalog = ctx.spark._jsparkSession.sessionState().catalogManager().catalog(name)
    ident = jvm.org.apache.spark.sql.connector.catalog.Identifier.of(namespace(ctx.spark, "bench"), "events")
    reporter = catalog.loadTable(ident).table().reporter()

    def last_report() -> int | None:
        """The identity of the last ScanReport (None before any)."""
        report = reporter.scanReport()
        return None if report is None else jvm.System.identityHashCode(report)

    return table, last_report


def test_execution_does_not_plan_again(ctx, reported, monkeypatch):
    from pyspark.sql import DataFrame

    table, last_report = reported
    seen: dict[str, int | None] = {}
    collect = DataFrame.collect

    def watched(df: DataFrame) -> list:
        seen["before execution"] = last_report()
        rows = collect(df)
        seen["after execution"] = last_report()
        return rows

    before = last_report()
    monkeypatch.setattr(DataFrame, "collect", watched)
    m = measure(ctx.spark, count_sql(table))
    assert m.status == "ok" and m.executed, m.error
    assert seen["before execution"] not in (None, before)  # planning made one scan report
    assert seen["after execution"] == seen["before execution"]  # execution made none


def test_planning_runs_no_spark_job(ctx, tiny):
    tracker = ctx.spark.sparkContext.statusTracker()
    for table in (tiny.dataset.iceberg_table, tiny.dataset.parquet_table):
        ctx.spark.sparkContext.setJobGroup("plan-only", "planning must read no data")
        try:
            m = measure(ctx.spark, count_sql(table), execute=False)
        finally:
            ctx.spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        assert m.status == "ok" and m.scan["files_scanned"] >= 1, m.error
        assert list(tracker.getJobIdsForGroup("plan-only")) == [], table


SLEEP_MS = 20


def slow_count(spark, table: str) -> tuple[str, float]:
    """A one-day count whose every row sleeps SLEEP_MS in execution (reflect is nondeterministic,
    so never folded at planning), and the least time two cores need to run it."""
    rows = spark.sql(f"SELECT count(*) AS n FROM {table} WHERE {DAY}").first().n
    sleep = f"reflect('java.lang.Thread', 'sleep', CAST({SLEEP_MS} AS BIGINT))"
    sql = f"SELECT count(*) FROM {table} WHERE {DAY} AND {sleep} IS NULL"
    return sql, SLEEP_MS * rows / 2  # two cores run at most two sleeping tasks at once


def test_slow_execution_stays_out_of_planning(ctx, tiny):
    sql, least_ms = slow_count(ctx.spark, tiny.dataset.parquet_table)
    m = measure(ctx.spark, sql)
    assert m.status == "ok", m.error
    # Execution holds the sleep; a planning clock that included execution would hold it too.
    assert m.execution_ms >= least_ms
    assert m.planning_ms < least_ms


def test_plain_collect_reference_times_the_whole_query(ctx, tiny):
    sql, least_ms = slow_count(ctx.spark, tiny.dataset.parquet_table)
    assert plain_collect_ms(ctx.spark, sql) >= least_ms


def test_a_planted_slowdown_sleeps_inside_execution_only_where_asked(ctx, tiny):
    """SetupConfig.plant: the sleep is part of execution_ms, sized from the execution itself."""
    sql = f"SELECT count(*) FROM {tiny.dataset.parquet_table}"
    plain, planted = measure(ctx.spark, sql), measure(ctx.spark, sql, slow_by=0.5)
    assert plain.planted_ms == 0 and planted.planted_ms > 0
    # The sleep is half the execution before it (2x), and a sleep lasts at least as asked:
    # execution_ms >= 2x + x.
    assert planted.execution_ms >= 3 * planted.planted_ms
    assert "planted_ms" not in planted.as_row()  # not a contract column
    assert measure(ctx.spark, sql, execute=False, slow_by=0.5).planted_ms == 0  # nothing executed


def test_a_measurement_past_its_timeout_is_cancelled_into_an_error_row(ctx, tiny):
    """protocol.timeout_s: the session's jobs are cancelled, the row says so, and the session
    goes on measuring; without a timeout the same query completes (the test above)."""
    sql, least_ms = slow_count(ctx.spark, tiny.dataset.parquet_table)
    timeout_s = least_ms / 1e3 / 4
    m = measure(ctx.spark, sql, timeout_s=timeout_s)
    assert m.status == "error" and not m.executed
    assert m.error.startswith(f"cancelled after protocol.timeout_s={timeout_s:g}: ")
    # A deadline as generous as a protocol's: on a loaded machine a plain count can outlast the
    # short one above, and this asks only whether the session still measures.
    after = measure(ctx.spark, count_sql(tiny.dataset.parquet_table), timeout_s=600)
    assert after.status == "ok", after.error


def test_planning_past_its_timeout_is_interrupted_and_the_session_goes_on(ctx, tiny, monkeypatch):
    """Local planning runs in the JVM thread serving this Python thread, in no Spark job, so
    cancelling jobs would not stop it: the deadline interrupts that thread. The stall point
    holds the measurement in a JVM sleep for 120 s: without the interrupt it would end then and
    the measurement would be ok; with it, it ends in an error row, the JVM lives on, and no
    interrupt is left pending on the thread."""
    monkeypatch.setattr(failpoints, "_hits", Counter())
    monkeypatch.setenv(failpoints.STALL_ENV, "measure.plan+120@jvm")
    table = tiny.dataset.iceberg_table
    m = measure(ctx.spark, count_sql(table), execute=False, timeout_s=0.5, grace_s=600)
    assert m.status == "error" and m.error.startswith(f"{TIMED_OUT}0.5: "), m.error
    assert jvm_running()
    assert not ctx.spark._jvm.java.lang.Thread.currentThread().isInterrupted()
    after = measure(ctx.spark, count_sql(table))  # the stall holds the first arrival only
    assert after.status == "ok", after.error
