"""What stored runs show of a dataset's tables and of where a run's time went: the files, bytes and
partitions a window over the whole span read, the as-ingested manifests, their span, the widest
read, and a planning or canonical run's minutes by kind of work.

A dataset's config is a dict as `conf/dataset/<name>.yaml` over `_base.yaml` composes it; a stored
run counts for a dataset only when its config agrees on every setting that fixes rows and layout.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

# The dataset settings that fix the rows and the layout.
LAYOUT = ["rows", "scale", "span_days", "end", "partitioning", "commits"]
LAYOUT += ["late_fraction", "late_max_days", "clock_skew_fraction"]
AS_INGESTED = "as_ingested"


def total_rows(config: dict[str, Any]) -> int:
    """Rows after scaling (DatasetConfig.total_rows)."""
    return int(round(config["rows"] * config.get("scale", 1.0)))


def matches(run: Run | None, name: str, config: dict[str, Any]) -> bool:
    """Whether `run` measured the dataset `name` as `config` sets its rows and layout."""
    ran = (run.config().get("dataset") or {}) if run else {}
    return ran.get("name") == name and all(str(ran.get(key)) == str(config.get(key)) for key in LAYOUT)


def dataset_name(run: Run) -> str:
    """The name of the dataset a run measured (`?` when its config does not say)."""
    return str((run.config().get("dataset") or {}).get("name", "?"))


def summary(run: Run) -> pd.DataFrame:
    """The run's summary.csv (per query, window and variant: medians and scan counts)."""
    return stored(run).table("summary.csv")


def full_window(run: Run) -> str | None:
    """The run's shortest window that starts at or before its dataset's first day (None: none does)."""
    dataset = run.config().get("dataset") or {}
    end = dt.date.fromisoformat(str(dataset["end"]))
    first = dt.datetime.combine(end - dt.timedelta(days=int(dataset["span_days"])), dt.time())
    covering = [
        (dt.datetime.fromisoformat(stop) - dt.datetime.fromisoformat(start), name)
        for name, (start, stop) in (run.meta().get("windows") or {}).items()
        if dt.datetime.fromisoformat(start) <= first
    ]
    return min(covering)[1] if covering else None


def whole_table(run: Run) -> dict[str, dict[str, float]]:
    """Per format (`parquet`, `iceberg` as ingested): the files, bytes and partitions a window over
    the whole span read, the largest over the run's queries (one filtering on time alone prunes
    nothing there)."""
    rows = summary(run)
    rows = rows[(rows["window"] == full_window(run)) & rows["files_scanned"].notna()]
    rows = rows[(rows["format"] != "iceberg") | (rows["profile"] == AS_INGESTED)]
    found = {}
    for fmt, part in rows.groupby("format", sort=False):
        row = part.loc[part["files_scanned"].idxmax()]
        found[fmt] = {
            "files": row["files_scanned"],
            "bytes": _or_zero(row["bytes_scanned"]),
            "partitions": _or_zero(row["partitions_scanned"]),
        }
    return found


def _or_zero(value: float) -> float:
    return 0.0 if pd.isna(value) else float(value)


def as_ingested(run: Run) -> dict[str, Any]:
    """The as-ingested Iceberg table's manifests as the run recorded them (run.json's variants)."""
    return (run.meta().get("variants") or {}).get(f"iceberg/{AS_INGESTED}") or {}


def manifest_span(run: Run) -> float | None:
    """Of a `manifest_health` run: the median share of day partitions one as-ingested manifest's
    bounds cover (None when its report has no as-ingested state)."""
    for state in json.loads((run.path / "report.json").read_text()):
        if state.get("state") == AS_INGESTED:
            return float(state["stats"]["span"]["median"])
    return None


def ladder(configs: dict[str, dict[str, Any]], planning: Run, health: Run | None) -> list[dict[str, Any]]:
    """Per dataset: its config, and what the planning run (files, bytes, manifests) and the
    manifest_health run (span) stored of its tables, when they measured it as configured."""
    rows = []
    for name, config in configs.items():
        read = whole_table(planning) if matches(planning, name, config) else {}
        span = manifest_span(health) if health and matches(health, name, config) else None
        rows.append(
            {
                "name": name,
                "config": config,
                "rows": total_rows(config),
                "parquet": read.get("parquet", {}),
                "iceberg": read.get("iceberg", {}),
                "manifests": as_ingested(planning) if read else {},
                "span": span,
            }
        )
    return rows


def widest_read(run: Run) -> pd.Series | None:
    """The Iceberg row of the run that read the most leaf fields (None: no row records them)."""
    m = stored(run).measurements()
    ice = m[(m["format"] == "iceberg") & m["read_leaves"].notna()]
    return None if ice.empty else ice.loc[ice["read_leaves"].idxmax()]


def planning_time(run: Run) -> dict[str, Any]:
    """A planning run's queries: seconds of execution and of planning, rounds executed and in all,
    and its full-span `count_window` (files, execution seconds on Iceberg as ingested and on
    Parquet, executions behind each median; None without both)."""
    m = stored(run).measurements()
    window = full_window(run)
    rows = summary(run)
    counts = rows[(rows["window"] == window) & (rows["query_id"] == "count_window")]
    counts = counts.drop_duplicates(["format", "profile"], keep="last").set_index(["format", "profile"])
    ice, pq = (
        counts.loc[key] if key in counts.index else None
        for key in (("iceberg", AS_INGESTED), ("parquet", "none"))
    )
    return {
        "execution_s": m["execution_ms"].sum() / 1000,
        "planning_s": m["planning_ms"].sum() / 1000,
        "executed_rounds": m.loc[m["executed"] & ~m["warmup"], "repetition"].nunique(),
        "rounds": m["repetition"].nunique(),
        "window": window,
        "count_window": ice is not None
        and pq is not None
        and {
            "files": ice["files_scanned"],
            "iceberg_s": ice["execution_ms_median"] / 1000,
            "parquet_s": pq["execution_ms_median"] / 1000,
            "n": ice["execution_ms_n"],
        },
    }


def canonical_time(run: Run, steady: pd.Series) -> dict[str, Any]:
    """A canonical run's minutes: one executed measured round in all and in execution, the
    steady-state phase's executions (`steady`: its rows) and one executed warm-up round (None
    without them)."""
    c = stored(run).measurements()
    executed = c[c["executed"] & ~c["warmup"]]
    warm = c[c["executed"] & c["warmup"] & ~steady]
    per_round, per_warmup = executed["repetition"].nunique() or 1, warm["repetition"].nunique() or 1
    return {
        "queries": len(run.meta().get("queries") or {}),
        "variants": len(run.meta().get("variants") or {}),
        "round_min": executed["total_ms"].sum() / 60000 / per_round,
        "execution_min": executed["execution_ms"].sum() / 60000 / per_round,
        "steady_min": c.loc[steady, "total_ms"].sum() / 60000 if steady.any() else None,
        "warmup_min": warm["total_ms"].sum() / 60000 / per_warmup if len(warm) else None,
    }
