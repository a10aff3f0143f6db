"""Schema-change rules: is each proposed change safe, rejected by Iceberg, or a hazard?

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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from icelab.schema.model import (
    Change,
    Column,
    TableState,
    is_promotion,
    parse_change,
    parse_transform,
)

SAFE, REJECTED, HAZARD = "safe", "rejected", "hazard"
_RANK = {SAFE: 0, HAZARD: 1, REJECTED: 2}


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
