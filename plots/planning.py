"""Planning-experiment charts, regenerated from a run directory's measurements alone.

python -m plots.planning results/runs/manifest_8mb            # the newest run
python -m plots.planning results/runs/manifest_8mb/<run_id>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.stats import summarize  # noqa: E402
from icelab.contract import MEASUREMENTS  # noqa: E402
from plots import chart_cli  # noqa: E402

CHARTS = ("planning_vs_window.png", "manifests_vs_window.png", "iceberg_vs_harness_planning.png")


def load_summary(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    """The run's per-(query, variant, window) summary and its run.json."""
    run = json.loads((run_dir / "run.json").read_text())
    measurements = pd.read_parquet(run_dir / MEASUREMENTS)
    return summarize(measurements, run["protocol"]["unstable_iqr"]), run


def _window_axis(ax: plt.Axes, summary: pd.DataFrame) -> None:
    ticks = summary.drop_duplicates("window").sort_values("window_hours")
    ax.set_xscale("log")
    ax.set_xticks(ticks["window_hours"], ticks["window"])
    ax.minorticks_off()
    ax.set_xlabel("time window (ending at the same point)")
    ax.grid(True, alpha=0.3)


def _save(fig: plt.Figure, what: str, run: dict, path: Path) -> None:
    fig.suptitle(f"{what} | {run['experiment']} on {run['dataset']} | run {run['run_id']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def planning_chart(summary: pd.DataFrame, run: dict, path: Path) -> None:
    """Median planning time vs window, one line per variant (IQR as error bars), one panel per query."""
    queries = list(dict.fromkeys(summary["query_id"]))
    fig, axes = plt.subplots(1, len(queries), figsize=(6 * len(queries), 4.5), squeeze=False)
    for ax, query in zip(axes[0], queries, strict=True):
        for variant, part in summary[summary["query_id"] == query].groupby("variant", sort=False):
            part = part.sort_values("window_hours")
            err = [
                part["planning_ms_median"] - part["planning_ms_q1"],
                part["planning_ms_q3"] - part["planning_ms_median"],
            ]
            ax.errorbar(
                part["window_hours"],
                part["planning_ms_median"],
                yerr=err,
                marker="o",
                capsize=3,
                label=variant,
            )
        _window_axis(ax, summary)
        ax.set_yscale("log")
        ax.set_ylabel("planning ms (median, IQR bars)")
        ax.set_title(query)
    axes[0][0].legend(fontsize=8)
    _save(fig, "Planning time vs window", run, path)


def manifests_chart(summary: pd.DataFrame, run: dict, path: Path) -> None:
    """Manifests scanned (Iceberg) and files planned (both formats) vs window, first query."""
    query = summary["query_id"].iloc[0]
    part = summary[summary["query_id"] == query]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for variant, rows in part[part["format"] == "iceberg"].groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        if rows["manifests_scanned"].notna().any():
            left.plot(rows["window_hours"], rows["manifests_scanned"], marker="o", label=variant)
    left.set_ylabel("manifests scanned")
    left.set_title(f"Iceberg manifests read in planning ({query})")
    for variant, rows in part.groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        if rows["files_scanned"].notna().any():
            right.plot(rows["window_hours"], rows["files_scanned"], marker="o", label=variant)
    right.set_yscale("log")
    right.set_ylabel("data files planned for the scan")
    right.set_title(f"Files planned ({query})")
    for ax in (left, right):
        _window_axis(ax, summary)
        ax.legend(fontsize=8)
    _save(fig, "What planning had to read", run, path)


def iceberg_planning_chart(summary: pd.DataFrame, run: dict, path: Path) -> None:
    """The harness's planning_ms beside Iceberg's own totalPlanningDuration, per Iceberg variant."""
    query = summary["query_id"].iloc[0]
    part = summary[(summary["query_id"] == query) & summary["iceberg_planning_ms_median"].notna()]
    fig, ax = plt.subplots(figsize=(10, 5))
    for variant, rows in part.groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        line = ax.plot(
            rows["window_hours"], rows["planning_ms_median"], marker="o", label=f"{variant} harness"
        )
        ax.plot(
            rows["window_hours"],
            rows["iceberg_planning_ms_median"],
            marker="x",
            linestyle="--",
            color=line[0].get_color(),
            label=f"{variant} Iceberg ScanReport",
        )
    _window_axis(ax, summary)
    ax.set_yscale("log")
    ax.set_ylabel("planning ms (median)")
    ax.set_title(f"Harness planning_ms vs Iceberg totalPlanningDuration ({query})")
    ax.legend(fontsize=7)
    _save(fig, "Two clocks on one planning", run, path)


def write_charts(run_dir: Path) -> list[Path]:
    """Every planning chart of a run, written into the run directory."""
    summary, run = load_summary(run_dir)
    if summary.empty:
        return []
    paths = [run_dir / name for name in CHARTS]
    planning_chart(summary, run, paths[0])
    manifests_chart(summary, run, paths[1])
    iceberg_planning_chart(summary, run, paths[2])
    return paths


def main(argv: list[str] | None = None) -> int:
    """Regenerate a run's charts from its stored measurements."""
    return chart_cli("python -m plots.planning", argv, write_charts, "run.json")


if __name__ == "__main__":
    sys.exit(main())
