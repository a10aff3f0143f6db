"""docs/schema-evolution.md's generated blocks: the schema_evolution reference run's sizes, its
outcome table (the one `icelab.charts.schema_table` writes) and what the records show."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.charts.schema_table import RECORDS, outcome_table, short, to_markdown
from icelab.core.runs import Run
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

EXPERIMENT = "schema_evolution"


def records(run: Run) -> pd.DataFrame:
    """scenarios.parquet, one row per scenario, indexed by scenario."""
    return pd.read_parquet(run.path / RECORDS).set_index("scenario", drop=False)


def version(run: Run, name: str, parts: int = 3) -> str:
    """A version from env.json, cut to `parts` components: `3.5`, `1.10.2`."""
    return ".".join(run.env()["versions"][name].split(".")[:parts])


def ids(fields: str) -> str:
    """`event_id=1, payload=2` from a JSON list of fields."""
    return ", ".join(f"{f['name']}={f['id']}" for f in json.loads(fields))


def error(text: str) -> str:
    """`UnsupportedOperationException: message` from `java.lang.UnsupportedOperationException: message`."""
    cls, _, message = text.partition(": ")
    return f"{cls.rsplit('.', 1)[-1]}: {message}"


def sizes(results: Path) -> str:
    """The run: provenance, sizes from its config, the NULL share of the followed payload."""
    run = reference_run(results, EXPERIMENT)
    rec = records(run)
    return render(
        "schema/run.md.j2",
        provenance=provenance(run),
        spark=version(run, "spark"),
        iceberg=version(run, "iceberg"),
        scenarios=len(rec),
        seconds=run_minutes(run) * 60,
        cores=(run.env().get("machine") or {}).get("cores", "?"),
        cfg=run.config()["experiment"],
        ref=rec.loc["rename"].to_dict(),  # the events table, payload followed, no change to the values
    )


def outcomes(results: Path) -> str:
    """The scenario x outcome table, as `icelab.charts.schema_table` renders scenarios.parquet,
    and the run's closing line."""
    frame = pd.read_parquet(reference_run(results, EXPERIMENT).path / RECORDS)
    return render(
        "schema/outcomes.md.j2",
        table=to_markdown(outcome_table(frame)),
        scenarios=len(frame),
        counts=frame.engine_outcome.value_counts().to_dict(),
        agree=int(frame["agree"].sum()),
    )


def findings(results: Path) -> str:
    """What the records show, one bullet per finding, every count from scenarios.parquet."""
    run = reference_run(results, EXPERIMENT)
    rec = records(run)
    row = {name: rec.loc[name].to_dict() for name in rec.index}
    drop_add, binary, readd = row["drop_add"], row["drop_add_binary"], row["readd_partition_name"]
    labels = ("after create", "after the drop", "after re-adding payload as binary")
    seq = json.loads(row["reference"]["ids_sequence"])
    rejected = rec[rec["engine_outcome"] == "rejected"]
    iceberg_own = rejected[rejected["error_origin"] == "iceberg"]["error_message"]
    sql_errors = rejected["sql_error"].dropna()
    works = (
        ("current reads", "current_error"),
        ("time travel", "time_travel_error"),
        ("new writes", "write_error"),
    )
    current, v2 = row["partition_source_drop"], row["add_default_v2"]
    return render(
        "schema/findings.md.j2",
        spark=version(run, "spark", 2),
        iceberg=version(run, "iceberg"),
        steps=[{"label": label, "ids": ids(json.dumps(f))} for label, f in zip(labels, seq, strict=False)],
        base_cols=len(json.loads(drop_add["ids_before"])),
        readded=_id_of(drop_add),
        drop_add=drop_add,
        rename=row["rename"],
        binary=binary,
        binary_error=short(binary["parquet_error"], 200)
        if isinstance(binary["parquet_error"], str)
        else None,
        types=[f"`{m.split(': ', 1)[1]}`" for m in iceberg_own if m.startswith("Cannot change column type")],
        nullability=next((m for m in iceberg_own if m.startswith("Cannot change column nullability")), None),
        not_supported=sum("NOT_SUPPORTED_CHANGE_COLUMN" in e for e in sql_errors),
        non_nullable=sum("Cannot change nullable column to non-nullable" in e for e in sql_errors),
        v3=row["add_default"],
        v3_error=error(row["add_default"]["sql_error"]),
        v2=v2,
        v2_error=error(v2["error_class"] + ": " + v2["error_message"]),
        current_error=error(current["error_class"] + ": " + current["error_message"]),
        works=[what for what, key in works if not row["old_partition_source_drop"][key]],
        metadata_error=row["old_partition_source_drop"]["metadata_error"].split(": ", 1)[1],
        readd=readd,
        readd_id=_id_of(readd),
        readd_fails=isinstance(readd["metadata_error"], str),
    )


def _id_of(record: dict) -> int:
    """The field id the record's changed column has after the change."""
    return next(f["id"] for f in json.loads(record["ids_after"]) if f["name"] == record["column_after"])


BLOCKS: dict[str, Callable[[Path], str]] = {
    "schema-run": sizes,
    "schema-outcomes": outcomes,
    "schema-findings": findings,
}
