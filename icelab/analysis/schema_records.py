"""What a `schema_evolution` run's records show (scenarios.parquet, one row per scenario, indexed
by scenario): the field ids of the reference sequence, what each change left readable, which
layer rejected what, and the partition hazards."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from icelab.core.runs import Run

# Where a record keeps the error of each kind of work after a partition source's drop.
WORKS = (
    ("current reads", "current_error"),
    ("time travel", "time_travel_error"),
    ("new writes", "write_error"),
)
STEPS = ("after create", "after the drop", "after re-adding payload as binary")


def version(run: Run, name: str, parts: int = 3) -> str:
    """A version from env.json, cut to `parts` components: `3.5`, `1.10.2`."""
    return ".".join(run.env()["versions"][name].split(".")[:parts])


def ids(fields: list[dict[str, Any]]) -> str:
    """`event_id=1, payload=2` from a list of fields."""
    return ", ".join(f"{f['name']}={f['id']}" for f in fields)


def error(text: str) -> str:
    """`UnsupportedOperationException: message` from `java.lang.UnsupportedOperationException: message`."""
    cls, _, message = text.partition(": ")
    return f"{cls.rsplit('.', 1)[-1]}: {message}"


def id_of(record: dict) -> int:
    """The field id the record's changed column has after the change."""
    return next(f["id"] for f in json.loads(record["ids_after"]) if f["name"] == record["column_after"])


def findings(rec: pd.DataFrame) -> dict[str, Any]:
    """The figures of each finding, by name: the records they come from (`drop_add`, `rename`,
    `binary`, `v3`, `v2`, `readd`), field ids, rejections by layer and errors in short."""
    row = {name: rec.loc[name].to_dict() for name in rec.index}
    drop_add, readd, v2 = row["drop_add"], row["readd_partition_name"], row["add_default_v2"]
    rejected = rec[rec["engine_outcome"] == "rejected"]
    iceberg_own = rejected[rejected["error_origin"] == "iceberg"]["error_message"]
    sql_errors = rejected["sql_error"].dropna()
    current, old = row["partition_source_drop"], row["old_partition_source_drop"]
    seq = json.loads(row["reference"]["ids_sequence"])
    return {
        "steps": [{"label": label, "ids": ids(f)} for label, f in zip(STEPS, seq, strict=False)],
        "base_cols": len(json.loads(drop_add["ids_before"])),
        "readded": id_of(drop_add),
        "drop_add": drop_add,
        "rename": row["rename"],
        "binary": row["drop_add_binary"],
        "types": [
            f"`{m.split(': ', 1)[1]}`" for m in iceberg_own if m.startswith("Cannot change column type")
        ],
        "nullability": next(
            (m for m in iceberg_own if m.startswith("Cannot change column nullability")), None
        ),
        "not_supported": sum("NOT_SUPPORTED_CHANGE_COLUMN" in e for e in sql_errors),
        "non_nullable": sum("Cannot change nullable column to non-nullable" in e for e in sql_errors),
        "v3": row["add_default"],
        "v3_error": error(row["add_default"]["sql_error"]),
        "v2": v2,
        "v2_error": error(v2["error_class"] + ": " + v2["error_message"]),
        "current_error": error(current["error_class"] + ": " + current["error_message"]),
        "works": [what for what, key in WORKS if not old[key]],
        "metadata_error": old["metadata_error"].split(": ", 1)[1],
        "readd": readd,
        "readd_id": id_of(readd),
        "readd_fails": isinstance(readd["metadata_error"], str),
    }
