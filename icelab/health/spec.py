"""Partition fields of any spec: how a partition value and a manifest's partition bounds compare.

Two forms meet here. Entries give each file's partition value through Spark (a date for
`days`, an int for `bucket`, `hours`, `months`, `years`, the source column's type for
`identity` and `truncate`); `reader.py` normalizes them in Spark SQL to Iceberg's internal
form (dates as days since 1970-01-01, timestamps as microseconds). Manifests give their
partition bounds as Iceberg's human strings (`Transform.toHumanString`: `2026-01-02` for a day,
`2026-01-02-10` for an hour, `2026-01` for a month, `3` for a bucket). `Field.parse_bound`
turns such a string into the same internal form, so bounds and values compare as Iceberg's
manifest evaluator compares them.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000
# Transforms whose values are units of time, finest first.
TIME_TRANSFORMS = ("hour", "day", "month", "year")


def _micros(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _from_micros(micros: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=micros)


def _month_index(day: dt.datetime) -> int:
    return (day.year - 1970) * 12 + day.month - 1


@dataclass(frozen=True)
class Field:
    """One partition field of a spec.

    Attributes:
        name: the partition field's name (`ts_day`, `id_bucket`), as in the `partition` struct.
        transform: Iceberg's transform string: identity, bucket[8], truncate[4], year, month,
            day, hour, void.
        result_type: Iceberg's type of the partition value (`date`, `int`, `string`,
            `timestamp`, `timestamptz`, `decimal(9, 2)`, ...).
        source: the source column's name (None when it was dropped from the schema).
    """

    name: str
    transform: str
    result_type: str
    source: str | None = None

    @property
    def base(self) -> str:
        """The transform without its argument: `bucket[8]` -> `bucket`."""
        return self.transform.split("[", 1)[0]

    @property
    def time_unit(self) -> str | None:
        """`hour`, `day`, `month` or `year` when the field's values are units of time, else None."""
        if self.base in TIME_TRANSFORMS:
            return self.base
        if self.base == "identity" and self.result_type == "date":
            return "day"
        return None

    def _kind(self) -> str:
        t = self.result_type
        if t in ("date",):
            return "date"
        if t.startswith("timestamp"):
            return "timestamp"
        if t in ("int", "long", "time"):
            return "int"
        if t.startswith("decimal"):
            return "decimal"
        if t in ("float", "double"):
            return "float"
        if t == "boolean":
            return "bool"
        if t == "binary" or t.startswith("fixed"):
            return "bytes"
        return "string"  # string, uuid

    def parse_bound(self, text: str | None) -> Any:
        """A manifest's human-string bound as the field's internal value (None stays None).

        Raises:
            ValueError: for a string that is not this field's human form.
        """
        if text is None:
            return None
        base = self.base
        if base == "void":
            return None
        if base == "bucket":
            return int(text)
        if base == "year":
            return int(text) - 1970
        if base == "month":
            year, month = text.split("-")
            return (int(year) - 1970) * 12 + int(month) - 1
        if base == "hour":
            match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})-(\d{2})", text)
            if not match:
                raise ValueError(f"bad hour bound '{text}'")
            day = dt.date.fromisoformat(match.group(1))
            return (day - EPOCH.date()).days * 24 + int(match.group(2))
        kind = self._kind()
        if base == "day" or kind == "date":
            return (dt.date.fromisoformat(text[:10]) - EPOCH.date()).days
        if kind == "timestamp":
            return _micros(dt.datetime.fromisoformat(text))
        if kind == "int":
            return int(text)
        if kind == "decimal":
            return Decimal(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            return text.lower() == "true"
        if kind == "bytes":
            return base64.b64decode(text)
        return text

    def normalize(self, value: Any) -> Any:
        """A partition value as Python gives it (date, datetime, bytearray) in internal form.

        `reader.py` normalizes dates and timestamps in Spark already; this covers values
        built in Python (tests, other readers).
        """
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return _micros(value)
        if isinstance(value, dt.date):
            return (value - EPOCH.date()).days
        if isinstance(value, (bytearray, memoryview)):
            return bytes(value)
        return value

    def human(self, value: Any) -> str:
        """An internal value in Iceberg's human form (the inverse of `parse_bound`)."""
        if value is None:
            return "null"
        base, kind = self.base, self._kind()
        if base == "year":
            return f"{1970 + int(value):04d}"
        if base == "month":
            return f"{1970 + int(value) // 12:04d}-{int(value) % 12 + 1:02d}"
        if base == "hour":
            moment = _from_micros(int(value) * HOUR_US)
            return f"{moment.date().isoformat()}-{moment.hour:02d}"
        if base == "day" or kind == "date":
            return (EPOCH.date() + dt.timedelta(days=int(value))).isoformat()
        if kind == "timestamp":
            return _from_micros(int(value)).replace(tzinfo=None).isoformat()
        if kind == "bytes":
            return base64.b64encode(bytes(value)).decode("ascii")
        if kind == "bool":
            return str(value).lower()
        return str(value)

    def unit_of(self, micros: int) -> int:
        """The time unit (of `time_unit`) holding an instant given in microseconds since 1970."""
        unit = self.time_unit
        if unit == "hour":
            return micros // HOUR_US
        if unit == "day":
            return micros // DAY_US
        moment = _from_micros(micros)
        if unit == "month":
            return _month_index(moment)
        if unit == "year":
            return moment.year - 1970
        raise ValueError(f"partition field {self.name} ({self.transform}) is not a unit of time")

    def unit_start(self, unit: int) -> int:
        """The first microsecond of a time unit."""
        kind = self.time_unit
        if kind == "hour":
            return unit * HOUR_US
        if kind == "day":
            return unit * DAY_US
        if kind == "month":
            return _micros(dt.datetime(1970 + unit // 12, unit % 12 + 1, 1, tzinfo=dt.timezone.utc))
        if kind == "year":
            return _micros(dt.datetime(1970 + unit, 1, 1, tzinfo=dt.timezone.utc))
        raise ValueError(f"partition field {self.name} ({self.transform}) is not a unit of time")


@dataclass(frozen=True)
class Spec:
    """One partition spec of a table (a table that evolved its partitioning has several)."""

    spec_id: int
    fields: tuple[Field, ...]

    def label(self, values: tuple[Any, ...]) -> str:
        """A partition as `field=value/...` in human form (`(unpartitioned)` without fields)."""
        if not self.fields:
            return "(unpartitioned)"
        return "/".join(f"{f.name}={f.human(v)}" for f, v in zip(self.fields, values, strict=True))

    @property
    def time_field(self) -> Field | None:
        """The spec's finest time field, the one a time window prunes on (None without one)."""
        timed = [f for f in self.fields if f.time_unit]
        if not timed:
            return None
        return min(timed, key=lambda f: TIME_TRANSFORMS.index(f.time_unit or "year"))

    def describe(self) -> str:
        """The spec as Spark SQL's PARTITIONED BY would say it."""
        if not self.fields:
            return "unpartitioned"
        parts = []
        for f in self.fields:
            base, arg = f.base, f.transform[len(f.base) :].strip("[]")
            src = f.source or "?"
            if base == "identity":
                parts.append(src)
            elif arg:
                parts.append(f"{base}({arg}, {src})")
            else:
                parts.append(f"{base}s({src})" if base in TIME_TRANSFORMS else f"{base}({src})")
        return ", ".join(parts)
