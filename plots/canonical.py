"""Canonical-queries charts (the study's Figures 8 and 9), regenerated from a run's results alone.

python -m plots.canonical results/runs/canonical             # the newest run
python -m plots.canonical results/runs/canonical/<run_id>
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from experiments.stats import PARTS, geomeans, ratios  # noqa: E402
from plots import chart_cli  # noqa: E402
from plots.planning import _save, load_summary  # noqa: E402

PARQUET = "parquet"
COLORS = {PARQUET: ("#1f4e79", "#8db3e2"), "iceberg": ("#7f3f00", "#f4b183")}


def _short(query_id: str) -> str:
    return query_id.split("_", 1)[0]


def stacked_chart(summary: pd.DataFrame, run: dict, setup: str, figure: str, path: Path) -> None:
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
        dark, light = COLORS[variant.split("/")[0]]
        pos = x - 0.4 + width * (i + 0.5)
        ax.bar(pos, planning, width, color=dark, label=f"{variant}: planning")
        ax.bar(pos, execution, width, bottom=planning, color=light, label=f"{variant}: execution")
        ax.errorbar(pos, planning + execution, yerr=spread, fmt="none", ecolor="black", capsize=2, lw=0.8)
    windows = summary.drop_duplicates("query_id").set_index("query_id")["window"]
    ax.set_xticks(x, [f"{_short(q)}\n{windows[q]}" for q in queries], fontsize=8)
    ax.set_xlabel("canonical query (and its window)")
    ax.set_ylabel("seconds (median planning + median execution; IQR of total)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, f"{figure}: Iceberg ({setup}) vs Parquet per query", run, path)


def gains_chart(summary: pd.DataFrame, run: dict, initial: str, path: Path) -> None:
    """Geometric-mean speed-up of each setup over the initial one, for planning, execution, total."""
    gains = geomeans(ratios(summary, f"iceberg/{initial}"), summary)
    order = {v: i for i, v in enumerate(run.get("variants", {}))}
    gains = gains[gains["variant"] != PARQUET].sort_values("variant", key=lambda c: c.map(order))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    y = np.arange(len(gains))
    height = 0.8 / len(PARTS)
    for i, part in enumerate(PARTS):
        speedup = 1 / gains[f"{part}_geomean"].astype(float)
        ax.barh(y - 0.4 + height * (i + 0.5), speedup, height, label=part.removesuffix("_ms"))
    ax.axvline(1, color="black", lw=0.8)
    ax.set_yticks(y, gains["variant"])
    ax.invert_yaxis()
    ax.set_xlabel(f"speed-up over iceberg/{initial} (geometric mean over queries; >1 is faster)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, "Gain of each optimization", run, path)


def write_charts(run_dir: Path) -> list[Path]:
    """Figures 8 and 9 and the gains chart, written into the run directory."""
    summary, run = load_summary(run_dir)
    if summary.empty:
        return []
    figures = run.get("figures", {"initial": "initial", "optimized": "optimized"})
    paths = [run_dir / n for n in ("figure8_initial.png", "figure9_optimized.png", "optimization_gains.png")]
    stacked_chart(summary, run, figures["initial"], "Figure 8 (initial setup)", paths[0])
    stacked_chart(summary, run, figures["optimized"], "Figure 9 (optimized setup)", paths[1])
    gains_chart(summary, run, figures["initial"], paths[2])
    return paths


def main(argv: list[str] | None = None) -> int:
    """Regenerate a canonical run's charts from its stored measurements."""
    return chart_cli("python -m plots.canonical", argv, write_charts, "run.json")


if __name__ == "__main__":
    sys.exit(main())
