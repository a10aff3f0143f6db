"""Manifest-health charts from a stored `manifest_health` run (the study's Figures 6 and 7).

python -m icelab.charts.health results/runs/manifest_health
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from icelab.charts import Chart, chart_cli, chart_files
from icelab.charts.style import color, finish, plt

CHARTS = ("manifests_per_partition.png", "manifest_sizes.png")


def per_partition_chart(parts: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Manifests per day partition, one panel per table state: exact and bounds-based."""
    states = list(dict.fromkeys(parts.state))
    fig, axes = plt.subplots(
        len(states), 1, figsize=(11, 3.2 * len(states) + 0.6), squeeze=False, sharex=True
    )
    for ax, state in zip(axes[:, 0], states, strict=True):
        p = parts[parts.state == state].sort_values("day")
        ax.bar(
            p.day,
            p.bounds,
            width=1.0,
            alpha=0.45,
            color=color(f"iceberg/{state}"),
            label="manifests whose bounds include the day",
        )
        ax.plot(p.day, p.exact, color="black", linewidth=1, label="manifests holding the day's entries")
        ax.set_ylabel("manifests (count)")
        ax.set_title(f"{state}: max {p.bounds.max()} opened, median {p.exact.median():g} holding")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("day partition (date)")
    axes[0, 0].legend()
    return finish(fig, "Manifests per day partition", run_dir, path)


def size_chart(mans: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Histogram of manifest sizes (KB), one series per table state."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for state, m in mans.groupby("state", sort=False):
        ax.hist(
            m.length / 1024,
            bins=30,
            alpha=0.6,
            color=color(f"iceberg/{state}"),
            label=f"{state} ({len(m)} manifests)",
        )
    ax.set_xlabel("manifest size (KB)")
    ax.set_ylabel("manifests (count)")
    ax.legend()
    ax.grid(True, alpha=0.3)
    return finish(fig, "Manifest size distribution", run_dir, path)


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """Both charts of a manifest_health run, written into `out` (default: the run directory)."""
    out = out or run_dir
    parts = pd.read_parquet(run_dir / "partitions.parquet")
    mans = pd.read_parquet(run_dir / "manifests.parquet")
    counted = "Counted from the table's metadata (deterministic: no repetitions, no spread)."
    return [
        Chart(
            "Manifests per day partition (Figure 6)",
            "Per day: manifests whose partition bounds include it (what a one-day query opens) and "
            f"manifests holding its entries, as ingested and after the rewrite. {counted}",
            per_partition_chart(parts, run_dir, out / CHARTS[0]),
        ),
        Chart(
            "Manifest sizes (Figure 7)",
            f"Distribution of manifest file sizes per table state. {counted}",
            size_chart(mans, run_dir, out / CHARTS[1]),
        ),
    ]


def write_charts(run_dir: Path) -> list[Path]:
    """Both charts of a manifest_health run, as PNG and SVG in its directory."""
    return chart_files(charts(run_dir))


def main(argv: list[str] | None = None) -> int:
    """Regenerate a manifest_health run's charts from its stored results."""
    return chart_cli("python -m icelab.charts.health", argv, write_charts, "manifest_health")


if __name__ == "__main__":
    sys.exit(main())
