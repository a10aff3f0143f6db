"""Schema-change checker: is each proposed change safe, rejected by Iceberg, or a hazard?

Pure Python, no Spark. Given the table's state (columns with types and required flags, the
current partition fields, columns that were partition sources in older specs, names dropped
earlier, and the columns consumers read by name) and a sequence of changes, each change gets
one verdict:

- `safe`: metadata-only, and every reader sees the same values as before;
- `rejected`: Iceberg refuses it (the schema stays as it was);
- `hazard`: Iceberg accepts it, but what readers see changes: old values become invisible,
  metadata tables break, or a reader by name loses its column.

The partition rules are what Iceberg 1.10.2 does, as the `schema_evolution` experiment
measures (and checks against these verdicts): dropping a current partition source is
rejected; dropping a past partition source is accepted and breaks the files/partitions/entries
metadata tables.

    python -m icelab.schema_check conf/schema_changes/example.yaml
    python -m icelab.schema_check conf/schema_changes/example.yaml --change 'drop payload'

Exit status: 0 when every change is safe, 1 when any is rejected or a hazard, 2 on bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from icelab.errors import UserError

SAFE, REJECTED, HAZARD = "safe", "rejected", "hazard"
_RANK = {SAFE: 0, HAZARD: 1, REJECTED: 2}
PRIMITIVES = ("boolean", "int", "long", "float", "double", "date", "timestamp", "string", "binary")
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
    """Normalise a type name (`bigint` -> `long`, `decimal(9, 2)` -> `decimal(9,2)`).

    Raises:
        CheckInputError: for a type the checker does not know.
    """
    name = re.sub(r"\s+", "", str(text).lower())
    name = {"bigint": "long", "integer": "int", "timestamptz": "timestamp", "bool": "boolean"}.get(name, name)
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
            f"bad change '{text}' (use one of: {', '.join(_FORMS)}; see icelab/schema_check.py)"
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


@dataclass(frozen=True)
class Verdict:
    """The checker's judgement of one change."""

    change: str
    category: str
    reason: str
    alternative: str = ""

    def line(self) -> str:
        """One console line."""
        tail = f". Instead: {self.alternative}" if self.alternative else ""
        return f"{self.category:<8} {self.change}: {self.reason}{tail}"


def worst(verdicts: Iterable[Verdict]) -> str:
    """The most serious category among verdicts (safe for none)."""
    return max((v.category for v in verdicts), key=_RANK.__getitem__, default=SAFE)


def _new_column_alt(name: str, what: str) -> str:
    return (
        f"add a new column (e.g. {name}_v2) {what}, backfill it from {name}, switch readers to it, "
        f"drop {name} in a later change"
    )


def _safe(reason: str, after: TableState) -> tuple[str, str, str, TableState]:
    return SAFE, reason, "", after


@dataclass
class _Checker:
    state: TableState
    dropped_types: dict[str, str] = field(default_factory=dict)

    def judge(self, change: Change) -> Verdict:
        handler = getattr(self, "_" + change.op.replace("-", "_"))
        before = self.state.column(change.column)
        category, reason, alternative, new_state = handler(change, self.state)
        if category != REJECTED and new_state is not None:
            self.state = new_state  # a rejected change leaves the table as it was
            if change.op == "drop" and before is not None:
                self.dropped_types[change.column] = before.type
        return Verdict(change.text, category, reason, alternative)

    # Each handler returns (category, reason, alternative, state after the change).

    def _add(self, c: Change, s: TableState):
        if s.column(c.column):
            return REJECTED, f"a column '{c.column}' already exists", "add it under a new name", None
        if c.default is not None and s.format_version < 3:
            return (
                REJECTED,
                f"a non-null default needs format v3 (table is v{s.format_version})",
                "add the column without a default and backfill, or upgrade the table to v3",
                None,
            )
        after = replace(s, columns=(*s.columns, Column(c.column, c.type or "")))
        if c.column in s.dropped:
            notes = ["drop-then-add: the new column gets a new field id, so old rows read NULL "
                     "at the current snapshot (time travel still shows the old values)"]  # fmt: skip
            old = self.dropped_types.get(c.column)
            if old and old != c.type and not is_promotion(old, c.type or ""):
                notes.append(f"and a type change {old} -> {c.type} outside the promotions")
            if c.column in s.past_partition_sources:
                notes.append("the name was a partition source in an older spec")
            return HAZARD, "; ".join(notes), _new_column_alt(c.column, f"of type {c.type}"), after
        fill = f"the default {c.default!r}" if c.default is not None else "NULL"
        return SAFE, f"metadata-only: new field id; existing rows read {fill}", "", after

    def _drop(self, c: Change, s: TableState):
        col = s.column(c.column)
        if col is None:
            return REJECTED, f"no column '{c.column}'", "", None
        if c.column in s.sources():
            return (
                REJECTED,
                "it is a source of the current partition spec (Iceberg: Cannot find source column "
                "for partition field)",
                "keep the column; if it must go, drop or replace the partition field first, and keep "
                "the column until no spec references it",
                None,
            )
        after = replace(
            s, columns=tuple(x for x in s.columns if x.name != c.column), dropped=s.dropped | {c.column}
        )
        if c.column in s.past_partition_sources:
            return (
                HAZARD,
                "it is a source of an older partition spec: accepted, but the files, partitions and "
                "entries metadata tables then fail (Cannot find source column for partition field; "
                "Iceberg #5676, #10234)",
                "keep the column (stop writing it); drop it only after no spec or data file "
                "references it (rewrite the table into the current spec first)",
                after,
            )
        if c.column in s.consumers:
            return (
                HAZARD,
                f"consumers read '{c.column}' by name and lose it",
                "switch those readers off the column first, drop it later",
                after,
            )
        return _safe(
            "metadata-only: old snapshots keep the values, the current schema no longer shows them", after
        )

    def _rename(self, c: Change, s: TableState):
        col = s.column(c.column)
        if col is None:
            return REJECTED, f"no column '{c.column}'", "", None
        if s.column(c.target or ""):
            return REJECTED, f"a column '{c.target}' already exists", "", None
        cols = tuple(replace(x, name=c.target) if x.name == c.column else x for x in s.columns)
        spec = tuple(replace(f, source=c.target) if f.source == c.column else f for f in s.partition)
        after = replace(s, columns=cols, partition=spec)
        if c.column in s.consumers:
            return (
                HAZARD,
                f"the field id keeps its values, but consumers read '{c.column}' by name and break",
                f"add '{c.target}' as a new column, backfill (or dual-write), switch readers, drop "
                f"'{c.column}' later",
                after,
            )
        return _safe("metadata-only: same field id, every existing value is read under the new name", after)

    def _set_type(self, c: Change, s: TableState):
        col = s.column(c.column)
        if col is None:
            return REJECTED, f"no column '{c.column}'", "", None
        after = replace(
            s, columns=tuple(replace(x, type=c.type) if x.name == c.column else x for x in s.columns)
        )
        if col.type == c.type:
            return SAFE, "no change", "", after
        if is_promotion(col.type, c.type or ""):
            return (
                SAFE,
                f"metadata-only promotion {col.type} -> {c.type}: old files are read widened",
                "",
                after,
            )
        return (
            REJECTED,
            f"{col.type} -> {c.type} is not an Iceberg type promotion (only int->long, float->double, "
            "decimal precision up)",
            _new_column_alt(c.column, f"of type {c.type}"),
            None,
        )

    def _require(self, c: Change, s: TableState):
        col = s.column(c.column)
        if col is None:
            return REJECTED, f"no column '{c.column}'", "", None
        if col.required:
            return SAFE, "already required", "", s
        return (
            REJECTED,
            "optional -> required: old files may hold nulls",
            "keep it optional and enforce non-null in writers, or add a new required column in a "
            "table migration",
            None,
        )

    def _optional(self, c: Change, s: TableState):
        if s.column(c.column) is None:
            return REJECTED, f"no column '{c.column}'", "", None
        cols = tuple(replace(x, required=False) if x.name == c.column else x for x in s.columns)
        return SAFE, "metadata-only: required -> optional", "", replace(s, columns=cols)

    def _move(self, c: Change, s: TableState):
        col = s.column(c.column)
        other = (c.target or "").removeprefix("after ")
        if col is None or (c.target != "first" and s.column(other) is None):
            return REJECTED, f"no column '{c.column if col is None else other}'", "", None
        rest = [x for x in s.columns if x.name != c.column]
        at = 0 if c.target == "first" else rest.index(s.column(other)) + 1  # type: ignore[arg-type]
        rest.insert(at, col)
        return (
            SAFE,
            "metadata-only reorder: values stay with their names",
            "",
            replace(s, columns=tuple(rest)),
        )

    def _drop_partition(self, c: Change, s: TableState):
        found = next((f for f in s.partition if f.name == c.column), None)
        if found is None:
            return REJECTED, f"no partition field '{c.column}'", "", None
        return (
            SAFE,
            "metadata-only partition evolution: old files keep their layout",
            "",
            replace(
                s,
                partition=tuple(f for f in s.partition if f is not found),
                past_partition_sources=s.past_partition_sources | {found.source},
            ),
        )

    def _add_partition(self, c: Change, s: TableState):
        new = parse_transform(c.target or "")
        if s.column(new.source) is None:
            return REJECTED, f"no column '{new.source}'", "", None
        return (
            SAFE,
            "metadata-only partition evolution: applies to new writes",
            "",
            replace(s, partition=(*s.partition, new)),
        )

    def _replace_partition(self, c: Change, s: TableState):
        found = next((f for f in s.partition if f.name == c.column), None)
        new = parse_transform(c.target or "")
        if found is None or s.column(new.source) is None:
            missing = f"partition field '{c.column}'" if found is None else f"column '{new.source}'"
            return REJECTED, f"no {missing}", "", None
        return (
            SAFE,
            "metadata-only partition evolution: old files keep their layout",
            "",
            replace(
                s,
                partition=tuple(new if f is found else f for f in s.partition),
                past_partition_sources=s.past_partition_sources | {found.source},
            ),
        )


def check(state: TableState, changes: Sequence[Change | str]) -> list[Verdict]:
    """One verdict per change, each judged on the state the changes before it left.

    A rejected change does not alter the state, as Iceberg leaves the table unchanged.
    """
    checker = _Checker(state)
    return [checker.judge(parse_change(c) if isinstance(c, str) else c) for c in changes]


def intended_columns(state: TableState, changes: Sequence[Change | str]) -> list[Column]:
    """The columns a writer that ignores Iceberg's rules would end up with (a plain Parquet writer).

    Every change is applied as asked, rejected or not; ones that make no sense are skipped.
    """
    cols = list(state.columns)
    for change in changes:
        c = parse_change(change) if isinstance(change, str) else change
        names = [x.name for x in cols]
        if c.op == "add" and c.column not in names:
            cols.append(Column(c.column, c.type or ""))
        elif c.op == "drop":
            cols = [x for x in cols if x.name != c.column]
        elif c.op == "rename" and c.target not in names:
            cols = [replace(x, name=c.target) if x.name == c.column else x for x in cols]
        elif c.op == "set-type":
            cols = [replace(x, type=c.type) if x.name == c.column else x for x in cols]
        elif c.op == "move" and c.column in names:
            moved = cols.pop(names.index(c.column))
            rest = [x.name for x in cols]
            other = (c.target or "").removeprefix("after ")
            cols.insert(
                0 if c.target == "first" else rest.index(other) + 1 if other in rest else len(cols), moved
            )
    return cols


def state_from_dict(raw: Any) -> TableState:
    """A `table:` section: format_version, columns (name: 'type [required]'), partition
    (['days(ts)', 'name=bucket(4,id)']), past_partition_sources, dropped, consumers.

    Raises:
        CheckInputError: on a missing or malformed key.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("columns"), dict) or not raw["columns"]:
        raise CheckInputError("the 'table' section needs 'columns' (name: type [required])")
    unknown = set(raw) - {
        "format_version",
        "columns",
        "partition",
        "past_partition_sources",
        "dropped",
        "consumers",
    }
    if unknown:
        raise CheckInputError(f"unknown key in 'table': {sorted(unknown)[0]}")
    columns = []
    for name, spec in raw["columns"].items():
        words = str(spec).split()
        if not words or words[1:] not in ([], ["required"]):
            raise CheckInputError(f"bad column '{name}: {spec}' (use 'type' or 'type required')")
        columns.append(Column(str(name), parse_type(words[0]), words[1:] == ["required"]))
    partition = []
    for item in raw.get("partition") or []:
        name, _, transform = str(item).rpartition("=")
        partition.append(parse_transform(transform, name or None))
    state = TableState(
        tuple(columns),
        tuple(partition),
        frozenset(_names(raw, "past_partition_sources")),
        frozenset(_names(raw, "dropped")),
        frozenset(_names(raw, "consumers")),
        int(raw.get("format_version", 2)),
    )
    missing = [f.source for f in state.partition if state.column(f.source) is None]
    if missing:
        raise CheckInputError(f"partition source '{missing[0]}' is not a column")
    return state


def _names(raw: dict[str, Any], key: str) -> list[str]:
    value = raw.get(key) or []
    if not isinstance(value, list):
        raise CheckInputError(f"'table.{key}' must be a list of column names")
    return [str(v) for v in value]


def load(path: Path, extra: Sequence[str] = ()) -> tuple[TableState, list[Change]]:
    """Read a changes file: a `table:` section and a `changes:` list (plus changes given on the CLI).

    Raises:
        CheckInputError: when the file is missing, not YAML, or malformed.
    """
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise CheckInputError(f"cannot read '{path}': {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise CheckInputError(f"'{path}' is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict) or "table" not in raw:
        raise CheckInputError(f"'{path}' needs a 'table:' section and a 'changes:' list")
    items = raw.get("changes") or []
    if not isinstance(items, list):
        raise CheckInputError("'changes' must be a list of changes, e.g. '- drop payload'")
    state = state_from_dict(raw["table"])
    changes = [parse_change(str(c)) for c in [*items, *extra]]
    if not changes:
        raise CheckInputError(f"no changes in '{path}' (add a 'changes:' list or --change)")
    return state, changes


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: print one verdict per change; 0 all safe, 1 any hazard or rejection, 2 bad input."""
    parser = argparse.ArgumentParser(prog="python -m icelab.schema_check", description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path, help="YAML with a 'table:' section and a 'changes:' list")
    parser.add_argument("--change", action="append", default=[], help="one more change, e.g. 'drop payload'")
    args = parser.parse_args(argv)
    try:
        state, changes = load(args.file, args.change)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    verdicts = check(state, changes)
    for v in verdicts:
        print(v.line())
    overall = worst(verdicts)
    print(f"overall: {overall}")
    return 0 if overall == SAFE else 1


if __name__ == "__main__":
    sys.exit(main())
