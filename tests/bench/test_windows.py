"""Windows and query templates: exact bounds, one-line errors, and the same answers on both
formats and in DuckDB."""

from __future__ import annotations

import datetime as dt

import pytest

from icelab.bench.measure import measure
from icelab.bench.windows import header, load_query, parse_window, render, window_in_data
from icelab.core.config import dataset_config
from icelab.core.errors import UserError

END = dt.datetime(2026, 6, 30)


@pytest.mark.parametrize(
    ("name", "start", "date_from", "date_to"),
    [
        ("1h", "2026-06-29 23:00:00", "2026-06-29", "2026-06-29"),
        ("1d", "2026-06-29 00:00:00", "2026-06-29", "2026-06-29"),
        ("7d", "2026-06-23 00:00:00", "2026-06-23", "2026-06-29"),
        ("180d", "2026-01-01 00:00:00", "2026-01-01", "2026-06-29"),
    ],
)
def test_window_bounds(name, start, date_from, date_to):
    p = parse_window(name, END).params
    assert (p["ts_from"], p["ts_to"]) == (start, "2026-06-30 00:00:00")
    assert (p["date_from"], p["date_to"]) == (date_from, date_to)


def test_full_window_is_the_data_span():
    w = parse_window("full", END, dt.timedelta(days=60))
    assert (w.start, w.end) == (dt.datetime(2026, 5, 1), END)
    assert w.params["date_from"] == "2026-05-01" and w.params["date_to"] == "2026-06-29"


def test_a_window_as_long_as_the_data_fits(compose_cfg):
    w = window_in_data("180d", None, dataset_config(compose_cfg("dataset=small")))
    assert (w.start, w.end) == (dt.datetime(2026, 1, 1), END)


def test_full_runs_from_the_first_day_to_an_earlier_end(compose_cfg):
    w = window_in_data("full", dt.date(2026, 6, 1), dataset_config(compose_cfg("dataset=tiny")))
    assert (w.start, w.end) == (dt.datetime(2026, 5, 1), dt.datetime(2026, 6, 1))


def test_a_query_window_longer_than_the_data_reads_all_of_it(compose_cfg):
    tiny = dataset_config(compose_cfg("dataset=tiny"))
    w = window_in_data("90d", None, tiny, longer_ok=True)  # q21's quarter on tiny's 60 days
    assert (w.start, w.end) == (dt.datetime(2026, 4, 1), END)
    with pytest.raises(UserError, match=r"window 90d \[2026-04-01, 2026-06-30\) starts before"):
        window_in_data("90d", None, tiny)
    with pytest.raises(UserError, match="would count only 19 of its 30 days; use a later experiment.end"):
        window_in_data("30d", dt.date(2026, 5, 20), tiny, longer_ok=True)


def test_header_reads_the_leading_comment_fields():
    fields = header("-- purpose: count\n-- window: 7d\nSELECT 1\n-- note: not header\n")
    assert fields == {"purpose": "count", "window": "7d"}


@pytest.mark.parametrize("bad", ["0d", "-1d", "7", "1w", "d"])
def test_bad_window_is_one_line(bad):
    with pytest.raises(UserError, match=f"bad window '{bad}'"):
        parse_window(bad, END)


def test_unknown_query_names_the_known_ones():
    with pytest.raises(
        UserError, match="choose from: count_window, count_window_hidden, nested_filter_window"
    ):
        load_query("q99")


@pytest.mark.parametrize("query_id", ["count_window", "nested_filter_window"])
@pytest.mark.parametrize("window", ["1h", "7d", "30d"])
def test_same_answer_on_both_formats(ctx, tiny, query_id, window):
    w = parse_window(window, dt.datetime.combine(tiny.dataset.config.end, dt.time()))
    template = load_query(query_id)
    ice = measure(ctx.spark, render(template, tiny.dataset.iceberg_table, w))
    pq = measure(ctx.spark, render(template, tiny.dataset.parquet_table, w))
    assert ice.status == pq.status == "ok", (ice.error, pq.error)
    assert ice.result_checksum == pq.result_checksum


def test_count_matches_duckdb(ctx, tiny):
    from icelab.core import storage
    from icelab.datagen.verify import duckdb_connection, parquet_source

    w = parse_window("7d", dt.datetime.combine(tiny.dataset.config.end, dt.time()))
    spark_count = ctx.spark.sql(render(load_query("count_window"), tiny.dataset.iceberg_table, w)).first()[0]
    p = w.params
    duck = (
        duckdb_connection()
        .execute(
            f"SELECT count(*) FROM {parquet_source(storage.local_path(tiny.dataset.parquet_uri))} "
            f"WHERE timestamp >= TIMESTAMPTZ '{p['ts_from']}+00' "
            f"AND timestamp < TIMESTAMPTZ '{p['ts_to']}+00'"
        )
        .fetchone()[0]
    )
    assert spark_count == duck > 0
