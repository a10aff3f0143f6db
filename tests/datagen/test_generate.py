"""The generator: XDM-like nested schema, deterministic at any parallelism, skewed and
time-shaped like real event data, with the late-arrival timeline that skews manifests."""

from __future__ import annotations

import datetime as dt
import math

import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, MapType, StructType

from icelab.core.config import dataset_config
from icelab.datagen.generate import generate_all, generate_batch
from icelab.datagen.timeline import batch_rows, hour_table
from icelab.datagen.verify import frame_checksums
from tests.conftest import codegen


def leaves(dtype, depth=0):
    """(leaf count, max struct depth) of a type."""
    if isinstance(dtype, StructType):
        found = [leaves(f.dataType, depth + 1) for f in dtype.fields]
        return sum(n for n, _ in found), max(d for _, d in found)
    if isinstance(dtype, ArrayType):
        return leaves(dtype.elementType, depth)
    if isinstance(dtype, MapType):
        k, dk = leaves(dtype.keyType, depth)
        v, dv = leaves(dtype.valueType, depth)
        return k + v, max(dk, dv)
    return 1, depth


@pytest.fixture(scope="module")
def ds(tiny_cfg):
    return dataset_config(tiny_cfg)


@pytest.fixture(scope="module")
def rows(ctx, ds):
    return generate_all(ctx.spark, ds).cache()


def test_schema_is_xdm_like(rows):
    schema = rows.schema
    n_leaves, depth = leaves(schema)
    assert n_leaves >= 60
    assert depth >= 4  # e.g. endUserIDs._experience.mcid.namespace.code
    names = set(schema.fieldNames())
    assert {"web", "environment", "device", "commerce", "marketing", "endUserIDs"} <= names
    assert schema["customAttributes"].dataType.simpleString() == "map<string,string>"
    assert isinstance(schema["productListItems"].dataType.elementType, StructType)
    ident = schema["identityMap"].dataType
    assert isinstance(ident, MapType) and isinstance(ident.valueType, ArrayType)
    assert isinstance(ident.valueType.elementType, StructType)
    geo = schema["environment"].dataType["geo"].dataType
    assert "latitude" in geo["_schema"].dataType.fieldNames()
    assert "pageViews" in schema["web"].dataType["webPageDetails"].dataType.fieldNames()


def test_same_seed_same_rows_at_parallelism_1_and_4(ctx, ds):
    with codegen(ctx.spark):
        one = frame_checksums(generate_all(ctx.spark, ds, parallelism=1))
        four = frame_checksums(generate_all(ctx.spark, ds, parallelism=4))
    assert one == four


def test_batches_together_are_all_rows(ctx, ds, rows):
    batches = [generate_batch(ctx.spark, ds, b, parallelism=3) for b in range(ds.commits)]
    union = batches[0]
    for b in batches[1:]:
        union = union.unionByName(b)
    with codegen(ctx.spark):
        assert frame_checksums(union) == frame_checksums(rows)


def test_other_seed_other_rows(ctx, ds, rows):
    other = generate_all(ctx.spark, ds.model_copy(update={"seed": ds.seed + 1}))
    with codegen(ctx.spark):
        assert frame_checksums(other) != frame_checksums(rows)


def test_batch_ranges_cover_ids_once(ds):
    ranges = [batch_rows(ds, b) for b in range(ds.commits)]
    assert ranges[0][0] == 0 and ranges[-1][1] == ds.total_rows
    assert all(a[1] == b[0] for a, b in zip(ranges[:-1], ranges[1:], strict=True))


def test_ids_unique_and_timestamps_in_span(rows, ds):
    stats = rows.agg(
        F.count("*").alias("n"),
        F.countDistinct("_id").alias("ids"),
        F.min("date").alias("lo"),
        F.max("date").alias("hi"),
    ).first()
    assert stats.n == stats.ids == ds.total_rows
    assert stats.lo >= ds.end - dt.timedelta(days=ds.span_days)
    assert stats.hi < ds.end
    assert rows.filter("date <> to_date(timestamp)").count() == 0


def within(observed: int, n: int, p: float, sigmas: float = 5.0) -> bool:
    """An observed count of n draws lies within `sigmas` binomial standard deviations of n*p."""
    return abs(observed - n * p) <= sigmas * math.sqrt(n * p * (1 - p))


def test_daily_cycle_follows_the_hour_weights(rows, ds):
    table = hour_table()
    counted = rows.groupBy(F.hour("timestamp").alias("h")).agg(F.count("*").alias("n")).collect()
    by_hour = {r.h: r.n for r in counted}
    for hour in range(24):  # every hour's share is its weight's, within sampling error
        assert within(by_hour.get(hour, 0), ds.total_rows, table.count(hour) / len(table)), hour
    # and the weights are a daily cycle: a peak (mid-afternoon UTC) several times the pre-dawn trough
    share = [table.count(hour) for hour in range(24)]
    peak, trough = share.index(max(share)), share.index(min(share))
    assert 12 <= peak <= 18 and 0 <= trough <= 6 and max(share) >= 5 * min(share)


def test_popularity_follows_the_power_law(rows, ds):
    # index = floor(n * u**k): the top tenth of keys (index < n/10) gets (1/10)**(1/k) of events.
    top = ds.users // 10
    expected = (top / ds.users) ** (1 / ds.popularity_skew)
    user = F.regexp_extract("endUserIDs._experience.mcid.id", r"(\d+)$", 1).cast("int")
    observed = rows.filter(user < top).count()
    assert within(observed, ds.total_rows, expected)
    assert expected > 0.4  # k = 3: about 46%, against 10% for uniform keys


def test_nulls_where_real_data_has_them(rows):
    got = rows.agg(
        F.avg(F.col("commerce").isNull().cast("int")).alias("no_commerce"),
        F.avg(F.col("marketing").isNull().cast("int")).alias("no_marketing"),
        F.avg(F.col("environment.geo.postalCode").isNull().cast("int")).alias("no_zip"),
        F.avg(F.col("endUserIDs._experience.mcid.id").isNull().cast("int")).alias("no_ecid"),
    ).first()
    assert 0.7 < got.no_commerce < 0.95
    assert 0.5 < got.no_marketing < 0.9
    assert 0.05 < got.no_zip < 0.3
    assert got.no_ecid == 0


def test_commerce_events_carry_products(rows):
    purchases = rows.filter("eventType = 'commerce.purchases'")
    assert purchases.count() > 0
    assert purchases.filter("commerce.order.priceTotal IS NULL OR size(productListItems) < 1").count() == 0
    assert rows.filter("eventType NOT LIKE 'commerce.%' AND productListItems IS NOT NULL").count() == 0


def test_late_and_skewed_rows_spread_each_batch_over_many_days(ctx, ds):
    first, last = (generate_batch(ctx.spark, ds, b) for b in (0, ds.commits - 1))
    days_last = last.select("date").distinct().count()
    interval = ds.span_days / ds.commits
    # Recent rows alone would cover ~interval days; the tails reach far beyond.
    assert days_last > 2 * interval
    assert first.agg(F.max("date")).first()[0] > last.agg(F.min("date")).first()[0]
