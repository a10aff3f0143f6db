"""The generated blocks of docs/maintenance.md: manifest health and snapshot expiry at medium.

Figures come from the reference runs of `manifest_health` (report.json, manifests.parquet,
partitions.parquet, the rules of its config.yaml) and `snapshot_expiry` (timeline.parquet,
expiry.json, its config.yaml); provenance from each run's env.json. Sizes are decimal: a kB is
1,000 bytes, an MB 1,000,000.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.core.runs import Run
from icelab.core.units import num, size
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.sources import provenance, reference_run

# --- manifest health -----------------------------------------------------------------------------


def health_run(results: Path) -> Run:
    return reference_run(results, "manifest_health")


def rules(results: Path) -> str:
    """The policy's thresholds as the reference run used them (its config's `experiment.rules`)."""
    run = health_run(results)
    return render(
        "maintenance/rules.md.j2", provenance=provenance(run), rules=run.config()["experiment"]["rules"]
    )


def _state(report: dict, partitions: pd.DataFrame, manifests: pd.DataFrame) -> dict[str, object]:
    """One table state: manifests, verdict, exact and bounds per day, span, sizes, reasons."""
    state = report["state"]
    days = partitions[partitions["state"] == state]
    mans = manifests[manifests["state"] == state]
    if len(days) != report["day_partitions"] or len(mans) != report["manifests"]:
        raise ValueError(f"manifest_health: report.json and the parquet files disagree on {state}")

    def spread(values: pd.Series) -> dict[str, float]:
        return {"min": values.min(), "max": values.max(), "median": values.median()}

    return {
        "report": report,
        "bytes": mans["length"].sum(),
        "days": len(days),
        "exact": spread(days["exact"]),
        "bounds": spread(days["bounds"]),
        "span": spread(mans["span_days"]),
        "length": spread(mans["length"]),
        "entries": spread(mans["entries"]),
    }


def health(results: Path) -> str:
    """The health report before and after the rewrite."""
    run = health_run(results)
    reports = json.loads((run.path / "report.json").read_text())
    partitions = pd.read_parquet(run.path / "partitions.parquet")
    manifests = pd.read_parquet(run.path / "manifests.parquet")
    before, *after = (_state(report, partitions, manifests) for report in reports)
    return render(
        "maintenance/health.md.j2",
        provenance=provenance(run),
        span_days=reports[0]["day_partitions"],
        before=before,
        after=after,
        target=run.config()["experiment"].get("rewrite_target"),
    )


# --- snapshot expiry -----------------------------------------------------------------------------


def expiry_run(results: Path) -> Run:
    return reference_run(results, "snapshot_expiry")


def _point(name: str, row: pd.Series) -> list[str]:
    return [
        name,
        num(row["snapshots"]),
        num(row["manifests"]),
        size(row["metadata_json_bytes"], "kB"),
        f"{size(row['metadata_dir_bytes'])} ({num(row['metadata_files'])})",
        f"{num(row['commit_probe_ms'])} ms",
        f"{num(row['planning_ms'])} ms",
    ]


def expiry_table(results: Path) -> str:
    """The timeline at its first, middle and last simulated day, and after expiry."""
    run = expiry_run(results)
    cfg = run.config()
    e, commits = cfg["experiment"], cfg["dataset"]["commits"]
    t = pd.read_parquet(run.path / "timeline.parquet")
    ingest, after = t[t["phase"] == "ingest"].sort_values("sim_day"), t[t["phase"] == "after_expiry"]
    first, last = ingest.iloc[0], ingest.iloc[-1]
    middle = ingest.iloc[(len(ingest) - 1) // 2]
    rows = [
        _point(f"day {first['sim_day']}", first),
        _point(f"day {middle['sim_day']}", middle),
        _point(f"day {last['sim_day']}, before expiry", last),
        *(_point(f"after expiry ({e['retain_days']} days kept)", row) for _, row in after.iterrows()),
    ]
    header = [
        "point",
        "snapshots",
        "manifests",
        "metadata.json",
        "metadata/ (files)",
        "metadata-only commit",
        f"planning, {e['probe_window']} count",
    ]
    return render(
        "maintenance/expiry.md.j2",
        provenance=provenance(run),
        commits=commits,
        e=e,
        days=len(ingest),
        table=table(header, rows),
    )


def expiry_notes(results: Path) -> str:
    """What expiry removed, what it kept (rows, checksums), and what it did not change."""
    run = expiry_run(results)
    cfg = run.config()
    summary = json.loads((run.path / "expiry.json").read_text())
    t = pd.read_parquet(run.path / "timeline.parquet")
    ingest = t[t["phase"] == "ingest"].sort_values("sim_day")
    expired = summary["expired"]
    if not summary["unchanged"] or summary["rows"] != summary["expected_rows"]:
        raise ValueError(f"snapshot_expiry: expiry changed the table's rows ({run.path / 'expiry.json'})")
    noise = t["planning_ms"] - t["planning_ms_min"]
    return render(
        "maintenance/expiry_notes.md.j2",
        b=summary["before"],
        a=summary["after"],
        summary=summary,
        lists=expired.get("deleted_manifest_lists_count", 0),
        others={
            k.removeprefix("deleted_").removesuffix("_count"): v
            for k, v in expired.items()
            if k != "deleted_manifest_lists_count" and v
        },
        commits=cfg["dataset"]["commits"],
        first=ingest.iloc[0].to_dict(),
        commit_ms={"min": t["commit_probe_ms"].min(), "max": t["commit_probe_ms"].max()},
        json_bytes_max=t["metadata_json_bytes"].max(),
        repetitions=cfg["experiment"]["probe_repetitions"],
        noisy=t.loc[noise.idxmax()].to_dict(),
        noise=noise.max(),
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "maintenance-rules": rules,
    "maintenance-health": health,
    "maintenance-expiry": expiry_table,
    "maintenance-expiry-notes": expiry_notes,
}
