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
from icelab.core.units import num, ratio, size
from icelab.tools.docs.markdown import table
from icelab.tools.docs.sources import provenance, reference_run


def per_day(values: pd.Series) -> str:
    """`200 for every day`, or `median 200, min 197, max 200`."""
    low, high = values.min(), values.max()
    if low == high:
        return f"{num(low)} for every day"
    return f"median {num(values.median())}, min {num(low)}, max {num(high)}"


# --- manifest health -----------------------------------------------------------------------------


def health_run(results: Path) -> Run:
    return reference_run(results, "manifest_health")


def rules(results: Path) -> str:
    """The policy's thresholds as the reference run used them (its config's `experiment.rules`)."""
    run = health_run(results)
    parts = [
        f"`{name}` {r['advise']:g} / {r['need']:g}" for name, r in run.config()["experiment"]["rules"].items()
    ]
    return (
        f"Thresholds (advise / need) in the reference run's config ({provenance(run)}): {', '.join(parts)}.\n"
    )


def _state(report: dict, partitions: pd.DataFrame, manifests: pd.DataFrame, span_days: int) -> str:
    """One table state: manifests, verdict, exact and bounds per day, span, sizes, reasons."""
    state = report["state"]
    days = partitions[partitions["state"] == state]
    mans = manifests[manifests["state"] == state]
    if len(days) != report["day_partitions"] or len(mans) != report["manifests"]:
        raise ValueError(f"manifest_health: report.json and the parquet files disagree on {state}")
    span = mans["span_days"]
    span_text = (
        f"every manifest spans all {span_days} days"
        if (span == span_days).all()
        else f"a manifest spans {num(span.median())} days at the median ({num(span.min())} to "
        f"{num(span.max())}; share of the days {report['stats']['span']['median']:.3f})"
    )
    reasons = ", ".join(f"`{r}`" for r in report["reasons"]) or "none"
    return (
        f"{report['manifests']} manifests ({size(mans['length'].sum())}) over {len(days)} days, "
        f"**{report['verdict'].upper()}**. Exact per day: {per_day(days['exact'])}. Bounds: "
        f"{per_day(days['bounds'])}. Span: {span_text}. Sizes {num(mans['length'].min() / 1e3)} to "
        f"{num(mans['length'].max() / 1e3)} kB, with {num(mans['entries'].min())} to "
        f"{num(mans['entries'].max())} entries. Reasons: {reasons}."
    )


def health(results: Path) -> str:
    """The health report before and after the rewrite."""
    run = health_run(results)
    reports = json.loads((run.path / "report.json").read_text())
    partitions = pd.read_parquet(run.path / "partitions.parquet")
    manifests = pd.read_parquet(run.path / "manifests.parquet")
    span_days = reports[0]["day_partitions"]
    before, *after = reports
    text = f"At medium ({provenance(run)}): as ingested, {_state(before, partitions, manifests, span_days)}"
    target = run.config()["experiment"].get("rewrite_target")
    for report in after:
        text += (
            f" After `rewrite_manifests` at {target} (`{report['state']}`): "
            f"{_state(report, partitions, manifests, span_days)}"
        )
    return text + "\n"


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
    head = (
        f"At medium ({provenance(run)}): {commits} commits at `commits_per_day` {e['commits_per_day']} = "
        f"{len(ingest)} simulated days, expiry keeping `retain_days` {e['retain_days']}; one metadata-only "
        f"commit per point, planning the median of `probe_repetitions` {e['probe_repetitions']} plans of "
        f"the {e['probe_window']} count (sizes in decimal kB and MB):\n\n"
    )
    header = [
        "point",
        "snapshots",
        "manifests",
        "metadata.json",
        "metadata/ (files)",
        "metadata-only commit",
        f"planning, {e['probe_window']} count",
    ]
    return head + table(header, rows)


def expiry_notes(results: Path) -> str:
    """What expiry removed, what it kept (rows, checksums), and what it did not change."""
    run = expiry_run(results)
    cfg = run.config()
    summary = json.loads((run.path / "expiry.json").read_text())
    t = pd.read_parquet(run.path / "timeline.parquet")
    ingest = t[t["phase"] == "ingest"].sort_values("sim_day")
    b, a, expired = summary["before"], summary["after"], summary["expired"]
    removed = b["snapshots"] - a["snapshots"]
    lists = expired.get("deleted_manifest_lists_count", 0)
    others = {k: v for k, v in expired.items() if k != "deleted_manifest_lists_count" and v}
    others_text = (
        "nothing else"
        if not others
        else ", ".join(f"{v} {k.removeprefix('deleted_').removesuffix('_count')}" for k, v in others.items())
    )
    if not summary["unchanged"] or summary["rows"] != summary["expected_rows"]:
        raise ValueError(f"snapshot_expiry: expiry changed the table's rows ({run.path / 'expiry.json'})")
    first, noise = ingest.iloc[0], (t["planning_ms"] - t["planning_ms_min"])
    shrink = b["metadata_json_bytes"] / a["metadata_json_bytes"]
    noisy = t.loc[noise.idxmax()]
    return (
        f"Expiry removed {removed} snapshots ({b['snapshots']} to {a['snapshots']}) and {lists} manifest "
        f"lists, {others_text}; `metadata.json` shrank {ratio(shrink, 1)} "
        f"({size(b['metadata_json_bytes'], 'kB')} to {size(a['metadata_json_bytes'], 'kB')}). Rows stayed "
        f"{num(summary['rows'])}, the dataset config's row count, and the scratch table's per-day row "
        f"counts and checksums were the same after expiry as before it (`unchanged` in `expiry.json`; "
        f"their sum {summary['checksum']}): a comparison within the run, not with the dataset's own "
        f"checksums. What expiry did *not* change, and why: planning reads the manifests of the current "
        f"snapshot, and after {cfg['dataset']['commits']} appends without merging that is still "
        f"{a['manifests']} manifests whatever the history. Planning grows with manifests "
        f"({num(first['planning_ms'])} ms at {first['manifests']}, {num(b['planning_ms'])} ms at "
        f"{b['manifests']}), not with snapshots ({num(a['planning_ms'])} ms at {a['snapshots']} snapshots "
        f"after expiry); the fix for that is the manifest rewrite above. The metadata-only commit stays "
        f"at {num(t['commit_probe_ms'].min())} to {num(t['commit_probe_ms'].max())} ms at every point, "
        f"since a {size(t['metadata_json_bytes'].max(), 'kB')} `metadata.json` is cheap to write on local "
        "disk. "
        f"`metadata/` hardly shrinks ({size(b['metadata_dir_bytes'])} to {size(a['metadata_dir_bytes'])}, "
        f"{b['metadata_files']} to {a['metadata_files']} files), because old `metadata.json` files are "
        f"kept: `write.metadata.delete-after-commit.enabled` is off by default. Each probe commit and "
        f"append also adds one. One commit per point and a median of "
        f"{cfg['experiment']['probe_repetitions']} plans: at one point (day {noisy['sim_day']}, "
        f"{noisy['phase'].replace('_', ' ')}) that median sat {num(noise.max())} ms above the fastest of "
        f"its plans, so treat differences of that size as noise.\n"
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "maintenance-rules": rules,
    "maintenance-health": health,
    "maintenance-expiry": expiry_table,
    "maintenance-expiry-notes": expiry_notes,
}
