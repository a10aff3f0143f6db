"""Manifest-health charts from a stored `manifest_health` or `doctor` run (the study's Figures 6
and 7), for any partition spec: by day when the table is partitioned by day alone, else by
partition in the order of their values.

python -m icelab.charts.health results/runs/manifest_health
python -m icelab.charts.health results/runs/doctor
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from icelab.charts import Chart, chart_cli, chart_files
from icelab.charts.style import color, finish, plt

CHARTS = ("manifests_per_partition.png", "manifest_sizes.png")


def write_charts(run_dir: Path) -> list[Path]:
    """Both charts of a manifest_health or doctor run, as PNG and SVG in its directory."""
    return chart_files(charts(run_dir))


def by_day(parts: pd.DataFrame) -> bool:
    """Whether the partitions are days (a `day` column, as manifest_health and a day-partitioned
    table's doctor run store), so the x axis is the calendar."""
    return "day" in parts.columns and bool(parts["day"].notna().all())


def per_partition_chart(parts: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Manifests per partition, one panel per table state: exact and bounds-based."""
    states = list(dict.fromkeys(parts.state))
    days = by_day(parts)
    fig, axes = plt.subplots(
        len(states), 1, figsize=(11, 3.2 * len(states) + 0.6), squeeze=False, sharex=days
    )
    for ax, state in zip(axes[:, 0], states, strict=True):
        p = parts[parts.state == state]
        if "files" in p.columns:  # doctor: partitions holding only delete files have no data manifests
            p = p[p.files > 0]
        p = p.sort_values("day") if days else p.sort_values(["spec_id", "label"], ignore_index=True)
        x = p.day if days else range(len(p))
        ax.bar(
            x,
            p.bounds,
            width=1.0,
            alpha=0.45,
            color=color(f"iceberg/{state}"),
            label=f"manifests whose bounds include the {'day' if days else 'partition'}",
        )
        ax.plot(
            x,
            p.exact,
            color="black",
            linewidth=1,
            label=f"manifests holding the {'day' if days else 'partition'}'s entries",
        )
        ax.set_ylabel("manifests (count)")
        ax.set_title(f"{state}: max {p.bounds.max()} opened, median {p.exact.median():g} holding")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("day partition (date)" if days else "partition (in the order of its values)")
    axes[0, 0].legend()
    return finish(fig, f"Manifests per {'day ' if days else ''}partition", run_dir, path)


def size_chart(mans: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Histogram of manifest sizes (KB), one series per table state."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    if "content" in mans.columns:  # doctor: data manifests only, as manifest_health stores them
        mans = mans[mans.content == 0]
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
    if "files" in parts.columns:
        parts = parts[parts.files > 0]
    if not len(parts):
        return []  # a table with no live data file (created, never written): nothing to chart
    counted = "Counted from the table's metadata (deterministic: no repetitions, no spread)."
    states = ", ".join(dict.fromkeys(parts.state))
    unit = "day" if by_day(parts) else "partition"
    return [
        Chart(
            f"Manifests per {unit} partition (Figure 6)"
            if unit == "day"
            else "Manifests per partition (Figure 6)",
            f"Per {unit}: manifests whose partition bounds include it (what a query selecting just that "
            f"{unit} opens) and manifests holding its entries, per table state ({states}). {counted}",
            per_partition_chart(parts, run_dir, out / CHARTS[0]),
        ),
        Chart(
            "Manifest sizes (Figure 7)",
            f"Distribution of data manifest file sizes per table state. {counted}",
            size_chart(mans, run_dir, out / CHARTS[1]),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    """Regenerate a manifest_health (or doctor) run's charts from its stored results."""
    return chart_cli("python -m icelab.charts.health", argv, write_charts, ("manifest_health", "doctor"))


if __name__ == "__main__":
    sys.exit(main())
