"""The doctor's library without a JVM: partition values and bounds of any transform, the
inclusion of partitions in manifest bounds, durations, table resolution before Spark, the advice's
target size, and the shared verdict."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest

from icelab.core.config import Threshold, manifest_health_rules
from icelab.core.errors import UserError
from icelab.experiments import manifest_health
from icelab.health.check import inclusion, parse_duration, utc_text
from icelab.health.policy import judge
from icelab.health.source import resolve
from icelab.health.spec import Field, Spec
from icelab.health.target import binary_text

DAY = Field("ts_day", "day", "date", "ts")
HOUR = Field("ts_hour", "hour", "int", "ts")
MONTH = Field("ts_month", "month", "int", "ts")
YEAR = Field("ts_year", "year", "int", "ts")
BUCKET = Field("id_bucket", "bucket[8]", "int", "id")


@pytest.mark.parametrize(
    ("field", "text", "internal"),
    [
        (DAY, "2026-01-02", (dt.date(2026, 1, 2) - dt.date(1970, 1, 1)).days),
        (HOUR, "2026-01-02-10", (dt.date(2026, 1, 2) - dt.date(1970, 1, 1)).days * 24 + 10),
        (MONTH, "2026-03", 56 * 12 + 2),
        (YEAR, "2026", 56),
        (BUCKET, "7", 7),
        (Field("name", "identity", "string", "name"), "b", "b"),
        (Field("n", "truncate[10]", "long", "n"), "120", 120),
        (Field("d", "identity", "date", "d"), "2026-01-02", 20455),
        (Field("x", "identity", "decimal(9, 2)", "x"), "12.30", Decimal("12.30")),
        (Field("ok", "identity", "boolean", "ok"), "true", True),
    ],
)
def test_a_bound_parses_to_the_internal_value_and_back(field, text, internal):
    assert field.parse_bound(text) == internal
    assert field.human(internal) == text


def test_timestamps_are_microseconds_and_dates_days_whatever_python_gives():
    ts = Field("ts", "identity", "timestamptz", "ts")
    micros = ts.parse_bound("2026-01-02T10:00Z")
    assert micros == int(dt.datetime(2026, 1, 2, 10, tzinfo=dt.timezone.utc).timestamp() * 1_000_000)
    assert ts.normalize(dt.datetime(2026, 1, 2, 10)) == micros  # naive: UTC, as the session runs
    assert DAY.normalize(dt.date(2026, 1, 2)) == DAY.parse_bound("2026-01-02")


def test_time_units_and_the_specs_time_field():
    spec = Spec(0, (BUCKET, DAY))
    assert spec.time_field == DAY and spec.describe() == "bucket(8, id), days(ts)"
    assert spec.label((3, 20455)) == "id_bucket=3/ts_day=2026-01-02"
    assert Spec(1, (DAY, HOUR)).time_field == HOUR  # the finest
    assert Spec(2, (BUCKET,)).time_field is None and Spec(3, ()).label(()) == "(unpartitioned)"
    for field, unit in ((HOUR, 490930), (DAY, 20455), (MONTH, 674), (YEAR, 56)):
        start = field.unit_start(unit)
        assert field.unit_of(start) == unit and field.unit_of(start - 1) == unit - 1


def test_inclusion_is_per_field_with_nulls_and_empty_bounds():
    fields = (BUCKET, DAY)
    keys = [(1, 10), (1, 12), (5, 10), (None, 10)]
    bounds = [
        ((0, 3, False), (10, 11, False)),  # buckets 0-3, days 10-11
        ((1, 7, True), (9, 20, False)),  # also nulls in bucket
        ((None, None, False), (10, 10, False)),  # no bucket bounds: includes nothing
    ]
    got = inclusion(keys, bounds, fields)
    expected = np.array(
        [[True, True, False], [False, True, False], [False, True, False], [False, True, False]]
    )
    assert (got == expected).all()
    strings = inclusion([("b",), ("z",)], [(("a", "c", False),)], (Field("s", "identity", "string", "s"),))
    assert strings[:, 0].tolist() == [True, False]


def test_durations_targets_and_timestamps():
    assert parse_duration("7d") == 7 * 86_400_000_000 and parse_duration("0s") == 0
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration("7 weeks")
    assert binary_text(65_536) == "64 KiB (65,536 bytes)" and binary_text(1536) == "1.5 KiB (1,536 bytes)"
    assert binary_text(8 * 1024**2) == "8 MiB (8,388,608 bytes)" and binary_text(100) == "100 bytes"
    assert utc_text(0) == "1970-01-01 00:00:00.000000+00:00"


def test_bad_table_paths_are_refused_before_spark(tmp_path):
    with pytest.raises(UserError, match="the path does not exist"):
        resolve(str(tmp_path / "missing"))
    plain = tmp_path / "events" / "date=2026-01-01"
    plain.mkdir(parents=True)
    (plain / "part-0.parquet").write_bytes(b"PAR1")
    with pytest.raises(UserError, match="not an Iceberg table.*plain Parquet table"):
        resolve(str(tmp_path / "events"))
    with pytest.raises(UserError, match="needs --uri"):
        resolve("db.t", "hive")
    with pytest.raises(UserError, match="does not fit --catalog rest"):
        resolve("db.t", "rest", "thrift://127.0.0.1:1")


def test_a_hadoop_table_resolves_to_its_catalog_and_an_old_version_to_its_file(tmp_path):
    meta = tmp_path / "wh" / "db" / "t" / "metadata"
    meta.mkdir(parents=True)
    for v in (1, 2):
        (meta / f"v{v}.metadata.json").write_text("{}")
    (meta / "version-hint.text").write_text("2")
    table = resolve(str(tmp_path / "wh" / "db" / "t"))
    assert (table.kind, table.ident, table.warehouse) == ("hadoop", "db.t", f"file://{tmp_path}/wh")
    assert resolve(str(meta / "v2.metadata.json")).kind == "hadoop"  # the current version
    old = resolve(str(meta / "v1.metadata.json"))
    assert old.kind == "path" and not old.writable


RULE = {"bounds_p90": Threshold(advise=4, need=16)}


@pytest.mark.parametrize(
    ("value", "level"),
    [
        (3.99, "healthy"),
        (4.0, "healthy"),  # at the advise limit: not above it
        (4.01, "rewrite advised"),
        (16.0, "rewrite advised"),  # at the need limit: advised, not needed
        (16.01, "rewrite needed"),
    ],
)
def test_a_rule_trips_only_above_its_limits(value, level):
    got, reasons = judge({"bounds": {"p90": value}}, RULE)
    assert got == level
    assert len(reasons) == (level != "healthy")


def test_the_verdict_is_the_worst_rule_and_names_each_that_tripped():
    rules = RULE | {"span_median": Threshold(advise=0.5, need=0.9)}
    level, reasons = judge({"bounds": {"p90": 20.0}, "span": {"median": 0.6}}, rules)
    assert level == "rewrite needed"
    assert reasons == [
        "bounds_p90 = 20.00 > 16 (rewrite needed)",
        "span_median = 0.60 > 0.5 (rewrite advised)",
    ]


def test_the_doctor_and_manifest_health_share_one_policy():
    assert manifest_health.judge is judge  # the doctor's verdict, importable from manifest_health too
    rules = manifest_health_rules()
    assert set(rules) == {"bounds_p90", "bounds_max", "span_median"}
    assert rules["bounds_p90"] == Threshold(advise=4, need=16)
