"""A forest plot of a comparison's effects: per cell, the ratio b over a (of medians, or paired
round by round) with its bootstrap interval, the no-change line at 1 and the threshold band around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from icelab.analysis import effect_intervals
from icelab.charts.style import finish, plt

COLORS = {
    effect_intervals.SLOWER: "#c00000",
    effect_intervals.FASTER: "#548235",
    effect_intervals.NOT_RECURRING: "#bf8f00",
}


def forest_chart(
    table: pd.DataFrame,
    timing: str,
    threshold: float,
    title: str,
    run_dir: Path,
    path: Path,
    confidence: float = effect_intervals.CONFIDENCE,
) -> list[Path]:
    """One row per (query, variant, window) of `timing` in a `compare` table; flagged effects in
    colour, cells without an interval as a bare point.

    Raises:
        ValueError: when the table has no row of `timing` with a ratio.
    """
    rows = table[(table["timing"] == timing) & table["ratio"].notna()].reset_index(drop=True)
    if rows.empty:
        raise ValueError(f"no {timing} cell with a ratio to draw")
    y = np.arange(len(rows))[::-1]
    fig, ax = plt.subplots(figsize=(7.5, max(2.5, 0.28 * len(rows) + 1.2)))
    ax.axvspan(1 - threshold, 1 + threshold, color="#d9d9d9", alpha=0.6, lw=0, label=f"1 ± {threshold:.0%}")
    ax.axvline(1, color="#595959", lw=0.8)
    for yi, r in zip(y, rows.itertuples(), strict=True):
        color = COLORS.get(r.effect, "#404040")
        if not np.isnan(r.ci_low):
            ax.plot([r.ci_low, r.ci_high], [yi, yi], color=color, lw=1.6)
        ax.plot(r.ratio, yi, "o", color=color, ms=4)
    for effect, color in COLORS.items():
        if (rows["effect"] == effect).any():
            ax.plot([], [], "o-", color=color, label=effect)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{r.query_id} · {r.variant} · {r.window}" for r in rows.itertuples()], fontsize=7)
    paired = "estimator" in rows.columns and (rows["estimator"] == "paired").all()
    estimate = "per-round b / a, order-balanced" if paired else "median(b) / median(a)"
    ax.set_xlabel(f"{timing}: {estimate}, {confidence:.0%} bootstrap interval")
    ax.legend(loc="best")
    return finish(fig, title, run_dir, path)
