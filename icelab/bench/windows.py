"""Time windows ending at a fixed point in the data, and the query templates in queries/.

A window `7d` ending at E covers [E - 7 days, E). Its `date` bounds are repeated in every
query, because the Parquet table can only prune directories on its partition column; Iceberg
prunes on `timestamp` through its days() transform either way.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from icelab.core.config import DatasetConfig, window_length
from icelab.core.errors import UserError

QUERIES = Path(__file__).resolve().parents[2] / "queries"


@dataclass(frozen=True)
class Window:
    """[start, end) in UTC, with the inclusive day range it touches."""

    name: str
    start: dt.datetime
    end: dt.datetime

    @property
    def params(self) -> dict[str, str]:
        """Template parameters for the window."""
        last = self.end - dt.timedelta(microseconds=1)
        return {
            "ts_from": self.start.strftime("%Y-%m-%d %H:%M:%S"),
            "ts_to": self.end.strftime("%Y-%m-%d %H:%M:%S"),
            "date_from": self.start.date().isoformat(),
            "date_to": last.date().isoformat(),
        }


FULL = "full"


def parse_window(name: str, end: dt.datetime, span: dt.timedelta | None = None) -> Window:
    """`1h`, `1d`, `7d`, `30d`, `90d`, `180d` ... ending at `end`; `full` is the data's whole span.

    Raises:
        UserError: for anything but a positive whole number of hours or days, or `full`.
    """
    try:
        length = window_length(name)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return Window(name, end - (length or span or dt.timedelta(0)), end)


def data_range(dataset: DatasetConfig) -> tuple[dt.datetime, dt.datetime]:
    """[first day, end) of a dataset as configured: every event is stamped inside it.

    Late rows arrive in later commits, but their timestamps stay inside the span, so this
    needs no data.
    """
    end = dt.datetime.combine(dataset.end, dt.time())
    return end - dt.timedelta(days=dataset.span_days), end


def _when(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d" if t.time() == dt.time() else "%Y-%m-%d %H:%M")


def window_in_data(
    name: str, end: dt.date | None, dataset: DatasetConfig, longer_ok: bool = False, what: str = ""
) -> Window:
    """The window `name` ending at `end` (default: the data's end), checked to lie inside the data.

    `full` is the data from its first day to `end`. A window starting before the first day would
    silently count fewer days than its name says, so it is an error, unless `longer_ok` and it is
    at least as long as the whole data: it then reads all of it (a canonical query's quarter on
    tiny's 60 days).

    Raises:
        UserError: naming the window, its range and the data's range.
    """
    first, last = data_range(dataset)
    stop = dt.datetime.combine(end, dt.time()) if end else last
    window = parse_window(name, stop, stop - first)
    where = f"{what}window {name} [{_when(window.start)}, {_when(window.end)})"
    data = f"dataset {dataset.name} spans [{_when(first)}, {_when(last)})"
    if window.end > last:
        raise UserError(f"{where} ends after the data: {data}; experiment.end may be at most {_when(last)}")
    if window.end <= first:
        raise UserError(f"{where} lies before the data: {data}; experiment.end must be after {_when(first)}")
    day = dt.timedelta(days=1)
    if window.start < first and not (longer_ok and window.end - window.start >= last - first):
        inside, length = (window.end - first) / day, (window.end - window.start) / day
        fix = f"windows up to {(window.end - first) // day}d, 'full', " if not longer_ok else ""
        raise UserError(
            f"{where} starts before the data's first day: {data}, so it would count only {inside:g} "
            f"of its {length:g} days; use {fix}a later experiment.end or a longer dataset.span_days"
        )
    return window


def check_window(name: str) -> None:
    """Validate a window name before any work starts (same rules and error as parse_window)."""
    parse_window(name, dt.datetime(2000, 1, 1))


def header(template: str) -> dict[str, str]:
    """A query file's leading `-- key: value` comment lines (purpose, exercises, window)."""
    fields = {}
    for line in template.splitlines():
        match = re.fullmatch(r"--\s*(\w+):\s*(.*)", line.strip())
        if not match:
            break
        fields[match.group(1)] = match.group(2).strip()
    return fields


def load_query(query_id: str) -> str:
    """The SQL template queries/<query_id>.sql.

    Raises:
        UserError: naming the known query ids when there is no such file.
    """
    path = QUERIES / f"{query_id}.sql"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in QUERIES.glob("*.sql")))
        raise UserError(f"unknown query '{query_id}' (choose from: {known})")
    return path.read_text()


def query_ids(names: list[str]) -> list[str]:
    """Full query ids for ids or unique prefixes: `q05` -> `q05_nested_filter_projection_day`.

    Raises:
        UserError: for a name matching no query, or more than one.
    """
    known = sorted(p.stem for p in QUERIES.glob("*.sql"))
    out = []
    for name in names:
        found = [k for k in known if k == name] or [k for k in known if k.startswith(f"{name}_")]
        if len(found) != 1:
            why = "matches no query" if not found else f"matches {len(found)} queries"
            raise UserError(f"query '{name}' {why} (choose from: {', '.join(known)})")
        out.append(found[0])
    return out


def render(template: str, table: str, window: Window) -> str:
    """The template with its table and window filled in."""
    return template.format(table=table, **window.params)
