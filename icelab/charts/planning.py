"""Planning-experiment charts (the study's Figure 10), regenerated from a run directory's
measurements alone.

python -m icelab.charts.planning results/runs/manifest_8mb            # the newest run
python -m icelab.charts.planning results/runs/manifest_8mb/<run_id>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.charts import Chart, chart_cli, chart_files
from icelab.charts.style import color, finish, plt

CHARTS = ("planning_vs_window.png", "manifests_vs_window.png", "iceberg_vs_harness_planning.png")


def write_charts(run_dir: Path) -> list[Path]:
    """Every planning chart of a run, as PNG and SVG in the run directory."""
    return chart_files(charts(run_dir))


def load_summary(run_dir: Path) -> tuple[pd.DataFrame, dict]:
    """The run's per-(query, variant, window) summary and its run.json."""
    run = json.loads((run_dir / "run.json").read_text())
    return stored(run_dir).summary(run["protocol"]["unstable_iqr"]), run


def reps(summary: pd.DataFrame, timing: str) -> str:
    """How many measured values each median is taken over, e.g. `5` or `1 to 3`."""
    n = summary[f"{timing}_n"].dropna().astype(int)
    n = n[n > 0]
    if n.empty:
        return "0"
    return f"{n.min()}" if n.min() == n.max() else f"{n.min()} to {n.max()}"


def _window_axis(ax: plt.Axes, summary: pd.DataFrame) -> None:
    ticks = summary.drop_duplicates("window").sort_values("window_hours")
    ax.set_xscale("log")
    ax.set_xticks(ticks["window_hours"], ticks["window"])
    ax.minorticks_off()
    ax.set_xlabel("time window ending at the data's end (log scale, hours)")
    ax.grid(True, alpha=0.3)


def _median_line(ax: plt.Axes, rows: pd.DataFrame, timing: str, **style: object) -> None:
    """The median of `timing` per window, its IQR as error bars."""
    iqr = [rows[f"{timing}_median"] - rows[f"{timing}_q1"], rows[f"{timing}_q3"] - rows[f"{timing}_median"]]
    ax.errorbar(rows["window_hours"], rows[f"{timing}_median"], yerr=iqr, capsize=3, **style)


def planning_chart(summary: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Median planning time vs window, one line per variant (IQR as error bars), one panel per query."""
    queries = list(dict.fromkeys(summary["query_id"]))
    fig, axes = plt.subplots(1, len(queries), figsize=(6 * len(queries), 4.8), squeeze=False)
    for ax, query in zip(axes[0], queries, strict=True):
        for variant, part in summary[summary["query_id"] == query].groupby("variant", sort=False):
            part = part.sort_values("window_hours")
            _median_line(ax, part, "planning_ms", marker="o", color=color(variant), label=variant)
        _window_axis(ax, summary)
        ax.set_yscale("log")
        ax.set_ylabel("planning time (ms, median; bars: IQR)")
        ax.set_title(query)
    axes[0][0].legend()
    return finish(fig, "Planning time vs time window", run_dir, path)


def manifests_chart(summary: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """Manifests scanned (Iceberg) and files planned (both formats) vs window, first query."""
    query = summary["query_id"].iloc[0]
    part = summary[summary["query_id"] == query]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for variant, rows in part[part["format"] == "iceberg"].groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        if rows["manifests_scanned"].notna().any():
            left.plot(
                rows["window_hours"],
                rows["manifests_scanned"],
                marker="o",
                color=color(variant),
                label=variant,
            )
    left.set_ylabel("manifests scanned (count)")
    left.set_title(f"Iceberg manifests read in planning ({query})")
    for variant, rows in part.groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        if rows["files_scanned"].notna().any():
            right.plot(
                rows["window_hours"], rows["files_scanned"], marker="o", color=color(variant), label=variant
            )
    right.set_yscale("log")
    right.set_ylabel("data files planned for the scan (count, log scale)")
    right.set_title(f"Files planned ({query})")
    for ax in (left, right):
        _window_axis(ax, summary)
        ax.legend()
    return finish(fig, "What planning had to read", run_dir, path)


def iceberg_planning_chart(summary: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """The harness's planning_ms beside Iceberg's own totalPlanningDuration, per Iceberg variant."""
    query = summary["query_id"].iloc[0]
    part = summary[(summary["query_id"] == query) & summary["iceberg_planning_ms_median"].notna()]
    fig, ax = plt.subplots(figsize=(10, 5.2))
    for variant, rows in part.groupby("variant", sort=False):
        rows = rows.sort_values("window_hours")
        _median_line(ax, rows, "planning_ms", marker="o", color=color(variant), label=f"{variant} harness")
        _median_line(
            ax,
            rows,
            "iceberg_planning_ms",
            marker="x",
            linestyle="--",
            color=color(variant),
            label=f"{variant} Iceberg ScanReport",
        )
    _window_axis(ax, summary)
    ax.set_yscale("log")
    ax.set_ylabel("planning time (ms, median; bars: IQR)")
    ax.set_title(f"Harness planning_ms vs Iceberg totalPlanningDuration ({query})")
    ax.legend(fontsize=7)
    return finish(fig, "Two clocks on one planning", run_dir, path)


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """Every planning chart of a run, written into `out` (default: the run directory)."""
    summary, _ = load_summary(run_dir)
    if summary.empty:
        return []
    out = out or run_dir
    n = reps(summary, "planning_ms")
    spread = f"Medians of {n} measured rounds per point (warm-ups excluded); error bars span the IQR."
    return [
        Chart(
            "Planning time vs window (Figure 10)",
            f"Planning = SQL text until every scan's splits are known, no data read. {spread}",
            planning_chart(summary, run_dir, out / CHARTS[0]),
        ),
        Chart(
            "What planning had to read",
            "Manifests scanned and files planned per window; counts are the same in every round.",
            manifests_chart(summary, run_dir, out / CHARTS[1]),
        ),
        Chart(
            "Harness vs Iceberg planning clock",
            "Harness planning_ms (solid) against Iceberg's ScanReport totalPlanningDuration "
            f"(dashed). {spread}",
            iceberg_planning_chart(summary, run_dir, out / CHARTS[2]),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    """Regenerate a run's charts from its stored measurements."""
    return chart_cli("python -m icelab.charts.planning", argv, write_charts, "planning")


if __name__ == "__main__":
    sys.exit(main())
