"""docs/schema-evolution.md's outcome block (the run, then `icelab.charts.schema_table`'s table cut to
four columns) and claims.md's schema-findings, from the schema_evolution reference run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis.schema_records import findings as figures
from icelab.analysis.schema_records import version
from icelab.charts.schema_table import RECORDS, outcome_table, to_markdown
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

EXPERIMENT = "schema_evolution"
SHOWN = ["scenario", "changes", "current", "engine"]  # the outcome table's columns on the page


def outcomes(results: Path) -> str:
    """The run (provenance, sizes, the followed payload's NULLs), each scenario's outcome, the last line."""
    run = reference_run(results, EXPERIMENT)
    frame = pd.read_parquet(run.path / RECORDS)
    return render(
        "schema/outcomes.md.j2",
        provenance=provenance(run),
        spark=version(run, "spark"),
        iceberg=version(run, "iceberg"),
        seconds=run_minutes(run) * 60,
        cores=(run.env().get("machine") or {}).get("cores", "?"),
        cfg=run.config()["experiment"],
        ref=frame.set_index("scenario").loc["rename"].to_dict(),  # payload followed, values unchanged
        table=to_markdown(outcome_table(frame)[SHOWN].rename(columns={"current": "old rows non-null now"})),
        counts=frame.engine_outcome.value_counts().to_dict(),
        agree=int(frame["agree"].sum()),
    )


def findings(results: Path) -> str:
    """What the records show, one claim and its figure per bullet."""
    run = reference_run(results, EXPERIMENT)
    rec = pd.read_parquet(run.path / RECORDS).set_index("scenario", drop=False)
    return render("schema/findings.md.j2", iceberg=version(run, "iceberg"), **figures(rec))


BLOCKS: dict[str, Callable[[Path], str]] = {"schema-outcomes": outcomes, "schema-findings": findings}
