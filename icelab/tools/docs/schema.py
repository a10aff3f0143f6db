"""docs/schema-evolution.md's generated blocks: the schema_evolution reference run's sizes, its
outcome table (the one `icelab.charts.schema_table` writes) and what the records show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.schema_records import findings as figures
from icelab.analysis.schema_records import version
from icelab.charts.schema_table import RECORDS, outcome_table, short, to_markdown
from icelab.core.runs import Run
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

EXPERIMENT = "schema_evolution"


def records(run: Run) -> pd.DataFrame:
    """scenarios.parquet, one row per scenario, indexed by scenario."""
    return pd.read_parquet(run.path / RECORDS).set_index("scenario", drop=False)


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
    found = figures(records(run))
    binary = found["binary"]["parquet_error"]
    return render(
        "schema/findings.md.j2",
        spark=version(run, "spark", 2),
        iceberg=version(run, "iceberg"),
        binary_error=short(binary, 200) if isinstance(binary, str) else None,
        **found,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "schema-run": sizes,
    "schema-outcomes": outcomes,
    "schema-findings": findings,
}
