"""One stored planning run (`manifest_8mb`, `manifest_sweep`) read case by case: its windows,
variants and table states from config.yaml and run.json, and each (query, variant, window)'s
medians, IQRs and growth ratios through `icelab.analysis.stats`, as the experiments compute them.
"""

from __future__ import annotations

import json

import pandas as pd

from icelab.analysis import stats
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

# A median whose IQR exceeds this share of it shows that share beside it in the tables.
WIDE_IQR = 0.10
# Manifests "aligned with the partitions": at most this many day partitions each, on average.
ALIGNED_DAYS = 4
QUERY = "count_window"  # the query the tables and the claims are about
NESTED = "nested_filter_window"
HIDDEN = "count_window_hidden"
PARQUET = "parquet"
AS_INGESTED = "iceberg/as_ingested"
PUSHDOWN = "iceberg/aggregate_pushdown"
STUDY_TARGET = "iceberg/rewrite_8mb"  # the study's 8 MB manifests


def summary(run: Run) -> pd.DataFrame:
    """The run's per-case medians and IQRs, as the experiment computes them (`stats.summarize`)."""
    return stored(run).summary(run.config()["protocol"]["unstable_iqr"])


def windows(run: Run) -> list[str]:
    """The run's windows, in its config's order (narrowest first)."""
    return list(run.config()["experiment"]["windows"])


def wide_narrow(run: Run) -> tuple[str, str]:
    """The windows of the run's growth ratio (`experiment.ratio`): wide, narrow."""
    wide, narrow = run.config()["experiment"]["ratio"]
    return wide, narrow


def variant_order(run: Run) -> list[str]:
    """The run's variants, in run.json's order."""
    return list(run.meta()["variants"])


def table_state(run: Run, variant: str) -> dict:
    """run.json's record of a variant's table: name, manifests, manifest bytes, Spark settings."""
    return run.meta()["variants"][variant]


def cell(frame: pd.DataFrame, query: str, variant: str, window: str) -> pd.Series:
    """The one summary row of (query, variant, window)."""
    rows = frame[(frame["query_id"] == query) & (frame["variant"] == variant) & (frame["window"] == window)]
    if len(rows) != 1:
        raise LookupError(f"{len(rows)} summary rows for {query} {variant} {window}")
    return rows.iloc[0]


def median(frame: pd.DataFrame, query: str, variant: str, window: str, timing: str = "planning_ms") -> float:
    """The median of one timing of one case."""
    return float(cell(frame, query, variant, window)[f"{timing}_median"])


def values(run: Run, query: str, variant: str, window: str, timing: str = "planning_ms") -> list[float]:
    """The measured values behind one case's median (the rows that count), smallest first: what a
    page prints beside a median of too few values for a spread."""
    m = stored(run).counted()
    rows = m[(m["query_id"] == query) & (m["variant"] == variant) & (m["window"] == window)]
    return sorted(rows[timing].dropna().astype(float))


def growth(run: Run, frame: pd.DataFrame) -> pd.DataFrame:
    """`stats.growth` over the run's ratio windows, indexed by (query, variant)."""
    return stats.growth(frame, *wide_narrow(run)).set_index(["query_id", "variant"])


def wide_iqr(row: pd.Series, timing: str = "planning_ms") -> float | None:
    """The IQR as a share of the median when it exceeds `WIDE_IQR`, else None."""
    share = row[f"{timing}_iqr"] / row[f"{timing}_median"]
    return float(share) if share > WIDE_IQR else None


def planning_median(row: pd.Series) -> dict[str, float | None]:
    """A table cell's figures: the median planning and, when it exceeds `WIDE_IQR`, the IQR's share."""
    return {"median": row["planning_ms_median"], "share": wide_iqr(row)}


def machine(run: Run) -> dict[str, object]:
    """The cores and memory of the machine the run measured on (env.json; `?` when not recorded)."""
    m = run.env().get("machine") or {}
    return {"cores": m.get("cores", "?"), "memory_gib": m.get("memory_gib", "?")}


def profile(variant: str) -> str:
    """`rewrite_8mb` of `iceberg/rewrite_8mb`."""
    return variant.split("/", 1)[1] if "/" in variant else variant


def label(run: Run, variant: str) -> str:
    """`parquet`, `iceberg as ingested`, `iceberg rewritten at 8MB`, else the profile's name."""
    if variant == PARQUET:
        return "parquet"
    if variant == AS_INGESTED:
        return "iceberg as ingested"
    target = ((run.meta().get("profiles") or {}).get(profile(variant)) or {}).get("manifest_target_size")
    return f"iceberg rewritten at {target}" if target else f"iceberg `{profile(variant)}`"


def plain(run: Run, variant: str) -> str:
    """`Parquet`, `as ingested`, `rewritten at 8MB`: a variant inside a sentence."""
    if variant == PARQUET:
        return "Parquet"
    return label(run, variant).removeprefix("iceberg ")


def short(variant: str) -> str:
    """`Parquet`, `as ingested`, or the profile's name in backticks."""
    if variant == PARQUET:
        return "Parquet"
    return "as ingested" if variant == AS_INGESTED else f"`{profile(variant)}`"


def days_per_manifest(run: Run, variant: str) -> float:
    """The dataset's day partitions over the variant's manifests."""
    return run.config()["dataset"]["span_days"] / table_state(run, variant)["manifests"]


def aligned(run: Run) -> list[str]:
    """Rewritten variants whose manifests hold at most `ALIGNED_DAYS` day partitions each, on average."""
    return [
        v
        for v in variant_order(run)
        if profile(v).startswith("rewrite_") and days_per_manifest(run, v) <= ALIGNED_DAYS
    ]


def reads_all(frame: pd.DataFrame, query: str, variant: str) -> bool:
    """Every window of `query` scans every manifest of `variant`."""
    part = frame[(frame["query_id"] == query) & (frame["variant"] == variant)]
    return bool((part["manifests_scanned"] == part["manifests_total"]).all())


def health_report(run: Run) -> dict[str, dict]:
    """A manifest_health run's report.json, by table state."""
    return {state["state"]: state for state in json.loads((run.path / "report.json").read_text())}
