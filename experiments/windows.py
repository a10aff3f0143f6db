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

from icelab.errors import UserError

QUERIES = Path(__file__).resolve().parent.parent / "queries"
_UNITS = {"h": dt.timedelta(hours=1), "d": dt.timedelta(days=1)}


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
    if name == FULL:
        return Window(name, end - (span or dt.timedelta(0)), end)
    match = re.fullmatch(r"(\d+)([hd])", name)
    if not match or int(match.group(1)) <= 0:
        raise UserError(f"bad window '{name}': use a positive number of hours or days (1h, 7d) or 'full'")
    length = int(match.group(1)) * _UNITS[match.group(2)]
    return Window(name, end - length, end)


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
