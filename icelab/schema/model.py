"""The checker's model of a table and its changes: types, partition fields, columns, parsed changes.

Pure Python, no Spark; `icelab.schema.rules` judges changes on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from icelab.core.errors import UserError

# Iceberg's type names: `timestamp` has no zone, `timestamptz` has one; no change between them is
# allowed. Spark DDL's TIMESTAMP is Iceberg's timestamptz, its TIMESTAMP_NTZ Iceberg's timestamp.
PRIMITIVES = (
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "date",
    "timestamp",
    "timestamptz",
    "string",
    "binary",
)
_ALIASES = {
    "bigint": "long",
    "integer": "int",
    "bool": "boolean",
    "timestamp_ntz": "timestamp",
    "timestamp_ltz": "timestamptz",
}
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
# Iceberg's default partition field names per transform, as Spark DDL creates them.
_TRANSFORM = re.compile(
    r"(?:(identity|years|months|days|hours)\((\w+)\)|(bucket|truncate)\((\d+),(\w+)\)|(\w+))"
)
_SUFFIX = {
    "years": "year",
    "months": "month",
    "days": "day",
    "hours": "hour",
    "bucket": "bucket",
    "truncate": "trunc",
}


class CheckInputError(UserError):
    """A change or table description that cannot be parsed."""


def parse_type(text: str) -> str:
    """Normalise a type name to Iceberg's (`bigint` -> `long`, `timestamp_ntz` -> `timestamp`,
    `decimal(9, 2)` -> `decimal(9,2)`).

    Raises:
        CheckInputError: for a type the checker does not know.
    """
    name = re.sub(r"\s+", "", str(text).lower())
    name = _ALIASES.get(name, name)
    if name in PRIMITIVES or _DECIMAL.fullmatch(name):
        return name
    raise CheckInputError(f"unknown type '{text}' (use {', '.join(PRIMITIVES)} or decimal(P,S))")


def is_promotion(old: str, new: str) -> bool:
    """Whether Iceberg's type-promotion rules allow `old` -> `new` in place."""
    if (old, new) in {("int", "long"), ("float", "double")}:
        return True
    a, b = _DECIMAL.fullmatch(old), _DECIMAL.fullmatch(new)
    return bool(a and b and a.group(2) == b.group(2) and int(b.group(1)) > int(a.group(1)))


@dataclass(frozen=True)
class PartitionField:
    """One partition field: its name, its transform as Spark DDL writes it, its source column."""

    name: str
    transform: str
    source: str


def parse_transform(text: str, name: str | None = None) -> PartitionField:
    """`days(ts)`, `bucket(4,event_id)`, `truncate(4,payload)`, `identity(c)` or `c`.

    Raises:
        CheckInputError: for anything else.
    """
    compact = re.sub(r"\s+", "", text)
    m = _TRANSFORM.fullmatch(compact)
    if not m:
        raise CheckInputError(f"bad partition transform '{text}' (e.g. days(ts), bucket(4,event_id), col)")
    if m.group(1):
        func, source = m.group(1), m.group(2)
        default = source if func == "identity" else f"{source}_{_SUFFIX[func]}"
    elif m.group(3):
        func, source = m.group(3), m.group(5)
        default = f"{source}_{_SUFFIX[func]}"
    else:
        source = default = m.group(6)
    return PartitionField(name or default, compact, source)


@dataclass(frozen=True)
class Column:
    """A top-level column as the checker sees it."""

    name: str
    type: str
    required: bool = False


@dataclass(frozen=True)
class TableState:
    """What the checker needs to know about a table.

    Attributes:
        columns: current columns in order.
        partition: the current spec's fields.
        past_partition_sources: columns that were partition sources in an older spec.
        dropped: names dropped earlier (old files still hold their values under the old id).
        consumers: columns read by name outside Iceberg (views, jobs, notebooks, CDC sinks).
        format_version: the table's format version (defaults need 3).
    """

    columns: tuple[Column, ...]
    partition: tuple[PartitionField, ...] = ()
    past_partition_sources: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()
    consumers: frozenset[str] = frozenset()
    format_version: int = 2

    def column(self, name: str) -> Column | None:
        """The column of that name, if any."""
        return next((c for c in self.columns if c.name == name), None)

    def sources(self) -> set[str]:
        """Source columns of the current partition spec."""
        return {f.source for f in self.partition}


@dataclass(frozen=True)
class Change:
    """One proposed schema or partition change, parsed from its text form.

    Forms: `add C TYPE [default V]`, `drop C`, `rename C to NEW`, `set-type C TYPE`,
    `require C`, `optional C`, `move C first`, `move C after OTHER`, `drop-partition FIELD`,
    `add-partition TRANSFORM`, `replace-partition FIELD with TRANSFORM`.
    """

    text: str
    op: str
    column: str
    type: str | None = None
    default: str | None = None
    target: str | None = None


_FORMS = {
    "add": re.compile(r"add (\w+) (\S+)(?: default (.+))?"),
    "drop": re.compile(r"drop (\w+)"),
    "rename": re.compile(r"rename (\w+) to (\w+)"),
    "set-type": re.compile(r"set-type (\w+) (\S+)"),
    "require": re.compile(r"require (\w+)"),
    "optional": re.compile(r"optional (\w+)"),
    "move": re.compile(r"move (\w+) (first|after \w+)"),
    "drop-partition": re.compile(r"drop-partition (\w+)"),
    "add-partition": re.compile(r"add-partition (\S+)"),
    "replace-partition": re.compile(r"replace-partition (\w+) with (\S+)"),
}


def parse_change(text: str) -> Change:
    """Parse one change (see `Change` for the forms).

    Raises:
        CheckInputError: naming the forms when the text matches none.
    """
    clean = " ".join(str(text).split())
    op = clean.split(" ", 1)[0]
    m = _FORMS[op].fullmatch(re.sub(r",\s+", ",", clean)) if op in _FORMS else None
    if not m:
        raise CheckInputError(
            f"bad change '{text}' (use one of: {', '.join(_FORMS)}; see icelab/schema/model.py)"
        )
    g = m.groups()
    if op == "add":
        return Change(clean, op, g[0], type=parse_type(g[1]), default=_unquote(g[2]))
    if op == "set-type":
        return Change(clean, op, g[0], type=parse_type(g[1]))
    if op == "rename":
        return Change(clean, op, g[0], target=g[1])
    if op == "move":
        return Change(clean, op, g[0], target=g[1])
    if op == "add-partition":
        return Change(clean, op, parse_transform(g[0]).source, target=g[0])
    if op == "replace-partition":
        return Change(clean, op, g[0], target=g[1])
    return Change(clean, op, g[0])


def _unquote(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text
