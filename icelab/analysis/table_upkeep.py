"""The figures of the table-maintenance runs: a `manifest_health` run's states before and after
its manifest rewrite (report.json, manifests.parquet, partitions.parquet), and a `snapshot_expiry`
run's timeline and what expiry removed (timeline.parquet, expiry.json).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from icelab.core.runs import Run


def _spread(values: pd.Series) -> dict[str, float]:
    return {"min": values.min(), "max": values.max(), "median": values.median()}


def health_states(run: Run) -> list[dict[str, Any]]:
    """Per table state of a `manifest_health` run, as ingested first: its report, manifest bytes,
    days, and the spread of exact and bounds manifests per day, span, size and entries per manifest.

    Raises:
        ValueError: when report.json and the parquet files disagree on a state's days or manifests.
    """
    partitions = pd.read_parquet(run.path / "partitions.parquet")
    manifests = pd.read_parquet(run.path / "manifests.parquet")
    states = []
    for report in json.loads((run.path / "report.json").read_text()):
        state = report["state"]
        days = partitions[partitions["state"] == state]
        mans = manifests[manifests["state"] == state]
        if len(days) != report["day_partitions"] or len(mans) != report["manifests"]:
            raise ValueError(f"manifest_health: report.json and the parquet files disagree on {state}")
        states.append(
            {
                "report": report,
                "bytes": mans["length"].sum(),
                "days": len(days),
                **{k: _spread(days[k]) for k in ("exact", "bounds")},
                "span": _spread(mans["span_days"]),
                **{k: _spread(mans[k]) for k in ("length", "entries")},
            }
        )
    return states


def timeline(run: Run) -> pd.DataFrame:
    """A `snapshot_expiry` run's timeline: one row per probe point."""
    return pd.read_parquet(run.path / "timeline.parquet")


def expiry_points(run: Run) -> dict[str, Any]:
    """The timeline's first, middle and last ingest day, the points after expiry, and the days."""
    t = timeline(run)
    ingest = t[t["phase"] == "ingest"].sort_values("sim_day")
    return {
        "first": ingest.iloc[0],
        "middle": ingest.iloc[(len(ingest) - 1) // 2],
        "last": ingest.iloc[-1],
        "after": [row for _, row in t[t["phase"] == "after_expiry"].iterrows()],
        "days": len(ingest),
    }


def expiry_effects(run: Run) -> dict[str, Any]:
    """What expiry removed and kept (expiry.json's summary, the manifest lists and the other
    files it deleted), the first ingest point, the range of commit times and the largest
    metadata.json, and the point whose median plan sat furthest above its fastest.

    Raises:
        ValueError: when expiry changed the table's rows.
    """
    summary = json.loads((run.path / "expiry.json").read_text())
    if not summary["unchanged"] or summary["rows"] != summary["expected_rows"]:
        raise ValueError(f"snapshot_expiry: expiry changed the table's rows ({run.path / 'expiry.json'})")
    expired = summary["expired"]
    t = timeline(run)
    noise = t["planning_ms"] - t["planning_ms_min"]
    return {
        "summary": summary,
        "lists": expired.get("deleted_manifest_lists_count", 0),
        "others": {
            k.removeprefix("deleted_").removesuffix("_count"): v
            for k, v in expired.items()
            if k != "deleted_manifest_lists_count" and v
        },
        "first": t[t["phase"] == "ingest"].sort_values("sim_day").iloc[0].to_dict(),
        "commit_ms": {"min": t["commit_probe_ms"].min(), "max": t["commit_probe_ms"].max()},
        "json_bytes_max": t["metadata_json_bytes"].max(),
        "noisy": t.loc[noise.idxmax()].to_dict(),
        "noise": noise.max(),
    }
