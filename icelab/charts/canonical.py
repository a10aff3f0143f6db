"""Canonical-queries charts (the study's Figures 8 and 9), regenerated from a run's results alone.

python -m icelab.charts.canonical results/runs/canonical             # the newest run
python -m icelab.charts.canonical results/runs/canonical/<run_id>
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from icelab.analysis.stats import PARTS
from icelab.analysis.stats import gains as stats_gains
from icelab.charts import Chart, chart_cli, chart_files
from icelab.charts.planning import load_summary, reps
from icelab.charts.style import FORMAT_COLORS, PARQUET, finish, plt

CHARTS = ("figure8_initial.png", "figure9_optimized.png", "optimization_gains.png")
PART_COLORS = {"planning_ms": "#8db3e2", "execution_ms": "#f4b183", "total_ms": "#7f7f7f"}


def write_charts(run_dir: Path) -> list[Path]:
    """Figures 8 and 9 and the gains chart, as PNG and SVG in the run directory."""
    return chart_files(charts(run_dir))


def _short(query_id: str) -> str:
    return query_id.split("_", 1)[0]


def stacked_chart(summary: pd.DataFrame, run_dir: Path, setup: str, figure: str, path: Path) -> list[Path]:
    """Per query, Parquet beside Iceberg under `setup`: median planning + median execution,
    stacked, with the IQR of the total as error bars."""
    variants = [v for v in (PARQUET, f"iceberg/{setup}") if v in set(summary["variant"])]
    queries = list(dict.fromkeys(summary["query_id"]))
    med = summary.set_index(["query_id", "variant"])
    x = np.arange(len(queries))
    width = 0.8 / len(variants)
    fig, ax = plt.subplots(figsize=(max(10, 0.6 * len(queries) + 3), 5.5))
    for i, variant in enumerate(variants):
        rows = med.reindex([(q, variant) for q in queries])
        planning = rows["planning_ms_median"].astype(float).fillna(0) / 1e3
        execution = rows["execution_ms_median"].astype(float).fillna(0) / 1e3
        spread = [
            (rows["total_ms_median"] - rows["total_ms_q1"]).astype(float).fillna(0) / 1e3,
            (rows["total_ms_q3"] - rows["total_ms_median"]).astype(float).fillna(0) / 1e3,
        ]
        dark, light = FORMAT_COLORS[variant.split("/")[0]]
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, planning, width, color=dark, label=f"{variant}: planning")
        ax.bar(pos, execution, width, bottom=planning, color=light, label=f"{variant}: execution")
        ax.errorbar(pos, planning + execution, yerr=spread, fmt="none", ecolor="black", capsize=2, lw=0.8)
    windows = summary.drop_duplicates("query_id").set_index("query_id")["window"]
    ax.set_xticks(x, [f"{_short(q)}\n{windows[q]}" for q in queries], fontsize=8)
    ax.set_xlabel("canonical query (and its window)")
    ax.set_ylabel("time (s): median planning + median execution; bars: IQR of total")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return finish(fig, f"{figure}: Iceberg ({setup}) vs Parquet per query", run_dir, path)


def gains_chart(summary: pd.DataFrame, run: dict, run_dir: Path, initial: str, path: Path) -> list[Path]:
    """Geometric-mean speed-up of each setup over the initial one, for planning, execution, total."""
    gains = stats_gains(summary, f"iceberg/{initial}")
    order = {v: i for i, v in enumerate(run.get("variants", {}))}
    gains = gains[gains["variant"] != PARQUET].sort_values("variant", key=lambda c: c.map(order))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    y = np.arange(len(gains))
    height = 0.8 / len(PARTS)
    for i, part in enumerate(PARTS):
        speedup = 1 / gains[f"{part}_geomean"].astype(float)
        ax.barh(
            y - 0.4 + height * (i + 0.5),
            speedup,
            height,
            color=PART_COLORS[part],
            label=part.removesuffix("_ms"),
        )
    ax.axvline(1, color="black", lw=0.8)
    ax.set_yticks(y, gains["variant"])
    ax.invert_yaxis()
    ax.set_xlabel(
        f"speed-up over iceberg/{initial} (x, geometric mean over queries of median ratios; >1 is faster)"
    )
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend()
    return finish(fig, "Gain of each optimization", run_dir, path)


def spread_note(summary: pd.DataFrame) -> str:
    """What the error bars rest on; says so plainly when each case was executed once."""
    planned, executed = reps(summary, "planning_ms"), reps(summary, "execution_ms")
    note = f"Planning: median of {planned} measured rounds; execution: median of {executed}."
    if executed == "1":
        note += " One execution per case, so execution and total have no spread (the IQR bars are empty)."
    return note


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """Figures 8 and 9 and the gains chart, written into `out` (default: the run directory)."""
    summary, run = load_summary(run_dir)
    if summary.empty:
        return []
    out = out or run_dir
    figures = run.get("figures", {"initial": "initial", "optimized": "optimized"})
    note = spread_note(summary)
    return [
        Chart(
            "Figure 8: initial setup vs Parquet",
            f"Per canonical query, Parquet beside Iceberg as first set up. {note}",
            stacked_chart(summary, run_dir, figures["initial"], "Figure 8 (initial setup)", out / CHARTS[0]),
        ),
        Chart(
            "Figure 9: optimized setup vs Parquet",
            f"Per canonical query, Parquet beside Iceberg with every optimization on. {note}",
            stacked_chart(
                summary, run_dir, figures["optimized"], "Figure 9 (optimized setup)", out / CHARTS[1]
            ),
        ),
        Chart(
            "Gain of each optimization",
            "Speed-up of each reading setup over the initial one: the geometric mean over queries of "
            f"the ratio of medians (no spread shown; see the per-query figures). {note}",
            gains_chart(summary, run, run_dir, figures["initial"], out / CHARTS[2]),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    """Regenerate a canonical run's charts from its stored measurements."""
    return chart_cli("python -m icelab.charts.canonical", argv, write_charts, "canonical")


if __name__ == "__main__":
    sys.exit(main())
