"""docs/schema-evolution.md's generated blocks: the schema_evolution reference run's sizes, its
outcome table (the one `icelab.charts.schema_table` writes) and what the records show."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.charts.schema_table import RECORDS, outcome_table, short, to_markdown
from icelab.core.runs import Run
from icelab.core.units import num, spelled
from icelab.tools.docs.markdown import listing
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

EXPERIMENT = "schema_evolution"


def records(run: Run) -> pd.DataFrame:
    """scenarios.parquet, one row per scenario, indexed by scenario."""
    return pd.read_parquet(run.path / RECORDS).set_index("scenario", drop=False)


def seconds(run: Run) -> str:
    """The run's duration from run.json, `55 s`."""
    return f"{run_minutes(run) * 60:.0f} s"


def version(run: Run, name: str, parts: int = 3) -> str:
    """A version from env.json, cut to `parts` components: `3.5`, `1.10.2`."""
    return ".".join(run.env()["versions"][name].split(".")[:parts])


def ids(fields: str) -> str:
    """`event_id=1, payload=2` from a JSON list of fields."""
    return ", ".join(f"{f['name']}={f['id']}" for f in json.loads(fields))


def count(value: float) -> str:
    return num(value)


def error(text: str) -> str:
    """`UnsupportedOperationException: message` from `java.lang.UnsupportedOperationException: message`."""
    cls, _, message = text.partition(": ")
    return f"{cls.rsplit('.', 1)[-1]}: {message}"


def sizes(results: Path) -> str:
    """The run: provenance, sizes from its config, the NULL share of the followed payload."""
    run = reference_run(results, EXPERIMENT)
    scfg = run.config()["experiment"]
    rec = records(run)
    ref = rec.loc["rename"]  # the events table, payload followed, no change to the values
    machine = run.env().get("machine") or {}
    return (
        f"{provenance(run)[0].upper()}{provenance(run)[1:]}; Spark {version(run, 'spark')}, Iceberg "
        f"{version(run, 'iceberg')}: {len(rec)} scenarios in {seconds(run)} on "
        f"{machine.get('cores', '?')} cores. Each table is written in `commits` = {scfg['commits']} "
        f"commits of `rows` = {num(scfg['rows'])} rows in all, then `new_rows` = "
        f"{num(scfg['new_rows'])} rows after the change; payload is NULL in "
        f"{num(ref['tt_old_rows'] - ref['tt_old_nonnull'])} of the {num(ref['tt_old_rows'])} old rows, "
        f"so {num(ref['tt_old_nonnull'])} old values. Field ids are `name=id type`, Iceberg's type "
        "names; Parquet errors are Spark's, first sentence:\n"
    )


def outcomes(results: Path) -> str:
    """The scenario x outcome table, as `icelab.charts.schema_table` renders scenarios.parquet,
    and the run's closing line."""
    run = reference_run(results, EXPERIMENT)
    frame = pd.read_parquet(run.path / RECORDS)
    counts = frame.engine_outcome.value_counts().to_dict()
    agree = int(frame["agree"].sum())
    return (
        to_markdown(outcome_table(frame))
        + f"\n`schema_evolution: {len(frame)} scenarios, {counts}; checker agrees with the engine on "
        f"{agree} of {len(frame)}`\n"
    )


def findings(results: Path) -> str:
    """What the records show, one bullet per finding, every count from scenarios.parquet."""
    run = reference_run(results, EXPERIMENT)
    rec = records(run)
    spark, iceberg = version(run, "spark", 2), version(run, "iceberg")

    # The reference program: ids after each step.
    seq = json.loads(rec.loc["reference", "ids_sequence"])
    labels = ("after create", "after the drop", "after re-adding payload as binary")
    steps = "; ".join(
        f"{label} `{ids(json.dumps(fields))}`" for label, fields in zip(labels, seq, strict=False)
    )
    drop_add = rec.loc["drop_add"]
    base_cols = len(json.loads(drop_add["ids_before"]))
    readded = next(
        f["id"] for f in json.loads(drop_add["ids_after"]) if f["name"] == drop_add["column_after"]
    )
    reference = (
        f"- **The reference reproduces**: {steps} (`ids_sequence` in `scenarios.parquet`, asserted in "
        f"a test). On the {base_cols}-column events table the re-added payload gets id {readded}.\n"
    )

    # Drop-then-add against rename, on Iceberg and by name on Parquet.
    rename = rec.loc["rename"]
    binary = rec.loc["drop_add_binary"]
    old = drop_add["tt_old_nonnull"]
    not_rename = (
        "- **Drop-then-add is not a rename**: at the current snapshot "
        f"{count(drop_add['current_old_nonnull'])} of the {count(old)} old payloads are visible; time "
        f"travel to the pre-change snapshot still reads {count(drop_add['tt_old_nonnull'])}; a rename "
        f"keeps {count(rename['current_old_nonnull'])} under the new name. A Parquet reader by name "
        f"sees the opposite: the same-type drop-then-add reads {count(drop_add['parquet_old_nonnull'])} "
        "old values, the rename "
        f"{count(rename['parquet_old_nonnull'])}, and a re-add as binary "
        + (
            f"makes the files unreadable together (`{short(binary['parquet_error'], 200)}`)"
            if isinstance(binary["parquet_error"], str)
            else f"reads {count(binary['parquet_old_nonnull'])}"
        )
        + ".\n"
    )

    # Rejections.
    rejected = rec[rec["engine_outcome"] == "rejected"]
    iceberg_own = rejected[rejected["error_origin"] == "iceberg"]
    types = [
        f"`{m.split(': ', 1)[1]}`"
        for m in iceberg_own["error_message"]
        if m.startswith("Cannot change column type")
    ]
    nullability = next(
        (m for m in iceberg_own["error_message"] if m.startswith("Cannot change column nullability")), None
    )
    sql_errors = rejected["sql_error"].dropna()
    not_supported = sum("NOT_SUPPORTED_CHANGE_COLUMN" in e for e in sql_errors)
    non_nullable = sum("Cannot change nullable column to non-nullable" in e for e in sql_errors)
    rejections = (
        "- **Rejections are Iceberg's own**: `IllegalArgumentException: Cannot change column type: "
        f"...` for {', '.join(types)}"
        + (f"; `{nullability}`" if nullability else "")
        + f". Spark {spark} refuses "
        + (
            f"all {spelled(len(types))}"
            if not_supported == len(types)
            else f"{spelled(not_supported)} of the {spelled(len(types))}"
        )
        + " type changes earlier with `[NOT_SUPPORTED_CHANGE_COLUMN]`"
        + (", and SET NOT NULL with `Cannot change nullable column to non-nullable`" if non_nullable else "")
        + "; both errors are kept.\n"
    )

    # Defaults.
    v3, v2 = rec.loc["add_default"], rec.loc["add_default_v2"]
    defaults = (
        f"- **Defaults** (format v{v3['format_version']}): Spark DDL `ADD COLUMN ... DEFAULT` fails in "
        f"this version (`{error(v3['sql_error'])}`); Iceberg's API `addColumn(name, type, "
        f"doc, Literal)` works on v{v3['format_version']} and old rows read the default "
        f"({count(v3['current_old_nonnull'])} of {count(v3['rows_old'])}), while a Spark `INSERT` that "
        "omits the column is refused (Spark does not know the write default; checked by hand, not "
        f"recorded). On v{v2['format_version']} the API refuses: "
        f"`{error(v2['error_class'] + ': ' + v2['error_message'])}`.\n"
    )

    # Partition hazards.
    current, old_spec, readd = (
        rec.loc[s] for s in ("partition_source_drop", "old_partition_source_drop", "readd_partition_name")
    )
    works = [
        what
        for what, key in (
            ("current reads", "current_error"),
            ("time travel", "time_travel_error"),
            ("new writes", "write_error"),
        )
        if not old_spec[key]
    ]
    readd_id = next(f["id"] for f in json.loads(readd["ids_after"]) if f["name"] == readd["column_after"])
    partitions = (
        f"- **Partition hazards on Iceberg {iceberg}**: dropping the source of the *current* spec is "
        f"refused (`{error(current['error_class'] + ': ' + current['error_message'])}`). #5676 "
        "(replace the partition field, then drop its old source column): no NPE any more; the drop "
        f"is accepted, {listing(works)} work, but the `files` and `partitions` metadata tables "
        "(probed in every run; `entries` too, checked by hand) fail with "
        f"`{old_spec['metadata_error'].split(': ', 1)[1]}` (as #10234 and #16217 report). #10487 "
        "(drop the partition field, drop the column, add a column of the same name): every step is "
        f"accepted now, the new `{readd['column_after']}` gets a new id ({readd_id}), old rows read "
        f"NULL ({count(readd['current_old_nonnull'])} of {count(readd['tt_old_nonnull'])}), and the "
        + (
            "metadata tables fail the same way"
            if isinstance(readd["metadata_error"], str)
            else "metadata tables work"
        )
        + ".\n"
    )
    return reference + not_rename + rejections + defaults + partitions


BLOCKS: dict[str, Callable[[Path], str]] = {
    "schema-run": sizes,
    "schema-outcomes": outcomes,
    "schema-findings": findings,
}
