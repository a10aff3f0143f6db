"""Manifests per day partition: exact and bounds-based counts agree with what planning reads."""

from __future__ import annotations

import datetime as dt

import pytest

from icelab.bench.manifest_stats import manifests, partition_counts, statistics
from icelab.bench.measure import measure
from icelab.bench.profiles import Profile, prepare
from icelab.bench.windows import load_query, parse_window, render


@pytest.mark.parametrize(("name", "target"), [("as_ingested", None), ("rewrite_16kb", 16 * 1024)])
def test_counts_agree_with_manifests_planning_scans(ctx, tiny, name, target):
    table = prepare(ctx.spark, tiny.dataset, Profile(name, target))
    counts = partition_counts(ctx.spark, table).set_index("day")
    assert len(counts) == 60 and (counts.exact <= counts.bounds).all()
    end = dt.datetime.combine(tiny.dataset.config.end, dt.time())
    for days_back in (1, 10, 30):  # the 1-day window ending `days_back` days before the end
        window = parse_window("1d", end - dt.timedelta(days=days_back - 1))
        m = measure(ctx.spark, render(load_query("count_window"), table, window), execute=False)
        day = window.start.date()
        assert m.scan["manifests_scanned"] == counts.bounds[day], (name, day)
    if target is not None:  # clustered by day: the counts coincide
        assert (counts.exact == counts.bounds).all()


def test_manifest_table_and_statistics(ctx, tiny):
    mans = manifests(ctx.spark, tiny.dataset.iceberg_table)
    assert len(mans) == tiny.dataset.config.commits
    assert (
        mans.entries.sum()
        == ctx.spark.sql(f"SELECT count(*) FROM {tiny.dataset.iceberg_table}.files").first()[0]
    )
    assert (mans.span_days > 30).all()  # late events: every ingested manifest spans most days
    s = statistics(mans.entries)
    assert s["min"] <= s["median"] <= s["p90"] <= s["p99"] <= s["max"] and set(s) == {
        "min",
        "max",
        "mean",
        "median",
        "stdev",
        "p60",
        "p90",
        "p99",
    }
