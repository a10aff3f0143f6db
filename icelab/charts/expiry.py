"""Snapshot-expiry chart from a stored `snapshot_expiry` run: metadata, commit and planning
against accumulated snapshots, with the point after expiry marked.

python -m icelab.charts.expiry results/runs/snapshot_expiry/<run_id>
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from icelab.charts import Chart, chart_cli
from icelab.charts.style import finish, plt
from icelab.core.runs import read_run

CHART = "expiry.png"
PANELS = (
    ("metadata_json_bytes", "current metadata.json", "size (KB)", 1 / 1024),
    ("commit_probe_ms", "metadata-only commit", "time (ms), one commit per point", 1),
    ("planning_ms", "planning, 1-day count", "time (ms): median; bar down to the minimum", 1),
)


def draw(run_dir: Path, path: Path) -> list[Path]:
    """Three panels against snapshots; the after-expiry point in red."""
    t = pd.read_parquet(run_dir / "timeline.parquet")
    ingest, after = t[t.phase == "ingest"], t[t.phase == "after_expiry"]
    fig, axes = plt.subplots(1, len(PANELS), figsize=(14, 4.4))
    for ax, (col, title, unit, scale) in zip(axes, PANELS, strict=True):
        for rows, style in (
            (ingest, {"marker": "o", "markersize": 3}),
            (after, {"color": "red", "marker": "s"}),
        ):
            label = "as snapshots accumulate" if rows is ingest else "after expiry"
            below = None
            if col == "planning_ms" and "planning_ms_min" in rows:
                below = [rows[col] - rows["planning_ms_min"], 0 * rows[col]]
            ax.errorbar(
                rows.snapshots,
                rows[col] * scale,
                yerr=below,
                linestyle="-" if rows is ingest else "none",
                capsize=2,
                label=label,
                **style,
            )
        ax.set_xlabel("snapshots (count)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    axes[0].legend()
    return finish(fig, "Snapshot accumulation and expiry", run_dir, path)


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """The expiry chart, written into `out` (default: the run directory)."""
    run = read_run(run_dir)
    n = ((run.config().get("experiment") or {}) if run else {}).get("probe_repetitions", "a few")
    return [
        Chart(
            "Snapshot accumulation and expiry",
            "Against snapshots as commits accumulate, and after expiring to the retention (red). "
            "One execution per point for metadata.json and the commit (no spread); planning is a "
            f"median of {n} plannings with a bar down to the fastest.",
            draw(run_dir, (out or run_dir) / CHART),
        )
    ]


def write_chart(run_dir: Path) -> Path:
    """The chart as PNG and SVG in the run directory; the PNG's path."""
    return charts(run_dir)[0].png


def main(argv: list[str] | None = None) -> int:
    """Regenerate a snapshot_expiry run's chart from its stored timeline."""
    return chart_cli(
        "python -m icelab.charts.expiry",
        argv,
        lambda run_dir: charts(run_dir)[0].files,
        "snapshot_expiry",
    )


if __name__ == "__main__":
    sys.exit(main())
