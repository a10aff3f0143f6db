"""Snapshot-expiry chart from a stored `snapshot_expiry` run: metadata, commit and planning
against accumulated snapshots, with the point after expiry marked.

python -m plots.expiry results/runs/snapshot_expiry/<run_id>
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from plots import chart_cli  # noqa: E402

CHART = "expiry.png"
PANELS = (
    ("metadata_json_bytes", "current metadata.json (bytes)"),
    ("commit_probe_ms", "metadata-only commit (ms)"),
    ("planning_ms", "planning, median (ms)"),
)


def write_chart(run_dir: Path) -> Path:
    """Three panels against snapshots; the after-expiry point in red."""
    t = pd.read_parquet(run_dir / "timeline.parquet")
    ingest, after = t[t.phase == "ingest"], t[t.phase == "after_expiry"]
    fig, axes = plt.subplots(1, len(PANELS), figsize=(14, 4))
    for ax, (col, label) in zip(axes, PANELS, strict=True):
        ax.plot(ingest.snapshots, ingest[col], marker="o", markersize=3, label="as snapshots accumulate")
        ax.scatter(after.snapshots, after[col], color="red", zorder=3, label="after expiry")
        ax.set_xlabel("snapshots")
        ax.set_title(label, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Snapshot accumulation and expiry | run {run_dir.name}", fontsize=10)
    fig.tight_layout()
    path = run_dir / CHART
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    """Regenerate a snapshot_expiry run's chart from its stored timeline."""
    return chart_cli(
        "python -m plots.expiry", argv, lambda run_dir: [write_chart(run_dir)], "timeline.parquet"
    )


if __name__ == "__main__":
    sys.exit(main())
