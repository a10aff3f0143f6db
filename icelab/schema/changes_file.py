"""A changes file: a `table:` section (the table's state) and a `changes:` list, read from YAML."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from icelab.schema.model import (
    Change,
    CheckInputError,
    Column,
    TableState,
    parse_change,
    parse_transform,
    parse_type,
)


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
    for item in partition_items(raw.get("partition")):
        name, _, transform = item.rpartition("=")
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


def partition_items(value: Any) -> list[str]:
    """The partition fields of `table.partition`, as a list or one string.

    YAML's flow list `[days(ts), bucket(16, user_id)]` splits at the comma inside the transform,
    as Spark's own syntax writes it; the pieces are joined again at the parentheses.
    """
    if not value:
        return []
    text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


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
