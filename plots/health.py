"""Manifest-health charts from a stored `manifest_health` run (the study's Figures 6 and 7).

python -m plots.health results/runs/manifest_health
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from plots import chart_cli  # noqa: E402

CHARTS = ("manifests_per_partition.png", "manifest_sizes.png")


def _save(fig: plt.Figure, title: str, path: Path) -> None:
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def per_partition_chart(parts: pd.DataFrame, run: str, path: Path) -> None:
    """Manifests per day partition, one panel per table state: exact and bounds-based."""
    states = list(dict.fromkeys(parts.state))
    fig, axes = plt.subplots(len(states), 1, figsize=(11, 3.2 * len(states)), squeeze=False, sharex=True)
    for ax, state in zip(axes[:, 0], states, strict=True):
        p = parts[parts.state == state].sort_values("day")
        ax.bar(p.day, p.bounds, width=1.0, alpha=0.45, label="manifests whose bounds include the day")
        ax.plot(p.day, p.exact, color="black", linewidth=1, label="manifests holding the day's entries")
        ax.set_ylabel("manifests")
        ax.set_title(f"{state}: max {p.bounds.max()} opened, median {p.exact.median():g} holding")
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    _save(fig, f"Manifests per day partition | run {run}", path)


def size_chart(mans: pd.DataFrame, run: str, path: Path) -> None:
    """Histogram of manifest sizes (KB), one series per table state."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for state, m in mans.groupby("state", sort=False):
        ax.hist(m.length / 1024, bins=30, alpha=0.6, label=f"{state} ({len(m)} manifests)")
    ax.set_xlabel("manifest size (KB)")
    ax.set_ylabel("manifests")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    _save(fig, f"Manifest size distribution | run {run}", path)


def write_charts(run_dir: Path) -> list[Path]:
    """Both charts of a manifest_health run, written into its directory."""
    parts = pd.read_parquet(run_dir / "partitions.parquet")
    mans = pd.read_parquet(run_dir / "manifests.parquet")
    paths = [run_dir / name for name in CHARTS]
    per_partition_chart(parts, run_dir.name, paths[0])
    size_chart(mans, run_dir.name, paths[1])
    return paths


def main(argv: list[str] | None = None) -> int:
    """Regenerate a manifest_health run's charts from its stored results."""
    return chart_cli("python -m plots.health", argv, write_charts, "partitions.parquet")


if __name__ == "__main__":
    sys.exit(main())
