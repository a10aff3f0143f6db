"""Planning cost-model charts: predicted against measured planning (how well the model does, the
cells it was not fitted on marked apart), and measured planning against table size with two
published figures as anchors.

Both read frames the cost model (`icelab costmodel`, icelab.analysis.planning_model) derives from stored
runs; nothing here fits, and nothing starts Spark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from icelab.charts import Chart
from icelab.charts.style import PARQUET, color, finish, plt

BAND = 0.25
# A point's colour is its layout and its marker its planning mode; its kind is how it is filled:
# fitted points solid, held-out ones (those that test the model) hollow with a heavy edge, the
# real-data reference runs solid with a black edge.
KINDS: dict[str, dict[str, object]] = {
    "fitted": {"s": 22, "alpha": 0.7},
    "held out": {"s": 52, "linewidths": 1.6},
    "reference": {"s": 30, "edgecolors": "black", "linewidths": 0.8},
}
MARKERS = ("o", "s", "^", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")


@dataclass(frozen=True)
class Anchor:
    """A published planning figure drawn beside ours: at `files` data files, `low_ms` to `high_ms`
    (`claim`: what was measured where, as docs/metadata-scale.md names it)."""

    label: str
    short: str
    files: float
    low_ms: float
    high_ms: float
    claim: str

    @property
    def published(self) -> str:
        """The figure as published: `3.9 to 4.3 s`, or `about 1 s` for a single value."""
        if self.high_ms > self.low_ms:
            return f"{self.low_ms / 1e3:g} to {self.high_ms / 1e3:g} s"
        return f"about {self.low_ms / 1e3:g} s"


ANCHORS = (
    Anchor(
        "LHBench: Iceberg 3.9-4.3 s startup at 200k files (Spark 3.3, Iceberg 1.1)",
        "LHBench",
        200_000,
        3_900,
        4_300,
        "LHBench (Spark 3.3, Iceberg 1.1): query startup at 200k files",
    ),
    Anchor(
        "Iceberg PR #8123: ~1 s partition-predicate planning at 20M files, clustered",
        "PR #8123",
        20_000_000,
        1_000,
        1_000,
        "Iceberg PR #8123: partition-predicate planning at 20M files, once clustered",
    ),
)


def series_label(fmt: str, layout: str, mode: str) -> str:
    """`rewrite_8mb · local`, `parquet · listing_serial`: one line's or marker's name."""
    return f"{PARQUET} · {mode}" if fmt == PARQUET else f"{layout} · {mode}"


def _color(fmt: str, layout: str) -> str | tuple[float, ...]:
    return color(PARQUET if fmt == PARQUET else f"{fmt}/{layout}")


def draw_scatter(points: pd.DataFrame, band: float = BAND) -> plt.Figure:
    """Predicted against measured planning ms (log-log) with the y = x line and the ±`band` band:
    colour per layout, marker per planning mode, fill per kind of point (KINDS). Each (kind,
    format, layout, mode) is one artist whose gid is `<kind>|<series label>`.

    Args:
        points: cells with planning_ms (measured), predicted_ms, format, mode, layout and kind
            (`fitted`, `held out` or `reference`).

    Raises:
        ValueError: when no point has both values positive (a log axis shows nothing else).
    """
    shown = points[(points["planning_ms"] > 0) & (points["predicted_ms"] > 0)]
    if shown.empty:
        raise ValueError("no point with positive measured and predicted planning to draw")
    fig, ax = plt.subplots(figsize=(7.5, 6.5))
    values = np.concatenate([shown["planning_ms"].to_numpy(float), shown["predicted_ms"].to_numpy(float)])
    xs = np.geomspace(values.min() / 1.5, values.max() * 1.5, 64)
    ax.fill_between(xs, xs * (1 - band), xs * (1 + band), color="#d9d9d9", alpha=0.6, lw=0, gid="band")
    ax.plot(xs, xs, color="#595959", lw=0.8, gid="identity")
    modes = sorted(map(str, shown["mode"].unique()))
    layouts: dict[str, str | tuple[float, ...]] = {}
    for (kind, fmt, mode, layout), part in shown.groupby(["kind", "format", "mode", "layout"], sort=False):
        shade = layouts.setdefault(PARQUET if fmt == PARQUET else str(layout), _color(fmt, layout))
        style = {"marker": MARKERS[modes.index(str(mode)) % len(MARKERS)], **KINDS.get(kind, KINDS["fitted"])}
        if kind == "held out":
            style |= {"facecolors": "none", "edgecolors": shade}
        else:
            style |= {"facecolors": shade}
        label = series_label(fmt, layout, mode)
        ax.scatter(part["planning_ms"], part["predicted_ms"], gid=f"{kind}|{label}", **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(xs[0], xs[-1])
    ax.set_xlabel("measured planning (ms, median of a cell)")
    ax.set_ylabel("predicted planning (ms)")
    ax.grid(True, which="both", alpha=0.25)
    grey = "#404040"
    handles = [
        Line2D([], [], color="#595959", lw=0.8, label="y = x"),
        plt.Rectangle((0, 0), 1, 1, color="#d9d9d9", alpha=0.6, label=f"within ±{band:.0%}"),
    ]
    for kind in dict.fromkeys(shown["kind"]):
        hollow = kind == "held out"
        edge = "black" if kind == "reference" else grey
        handles.append(
            Line2D([], [], ls="", marker="o", mfc="none" if hollow else grey, mec=edge, label=kind)
        )
    handles += [
        Line2D([], [], ls="", marker=MARKERS[i % len(MARKERS)], color=grey, label=m)
        for i, m in enumerate(modes)
    ]
    handles += [plt.Rectangle((0, 0), 1, 1, color=c, label=name) for name, c in layouts.items()]
    ax.legend(handles=handles, loc="upper left", fontsize=7, ncol=2)
    left_out = len(points) - len(shown)
    if left_out:
        ax.text(
            0.99,
            0.01,
            f"{left_out} cells with a non-positive value not drawn",
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="#595959",
        )
    return fig


def scatter_chart(
    points: pd.DataFrame,
    run_dir: Path,
    path: Path,
    title: str = "Planning cost model: predicted against measured",
    band: float = BAND,
) -> list[Path]:
    """`draw_scatter`, titled and saved as PNG and SVG."""
    return finish(draw_scatter(points, band), title, run_dir, path)


def _query(frame: pd.DataFrame, query: str | None) -> pd.DataFrame:
    if "query_id" not in frame.columns:
        return frame
    queries = list(dict.fromkeys(frame["query_id"].dropna()))
    chosen = query or ("count_window" if "count_window" in queries else (queries[0] if queries else None))
    return frame if chosen is None else frame[frame["query_id"] == chosen]


def draw_planning_vs_files(
    frame: pd.DataFrame, anchors: tuple[Anchor, ...] = ANCHORS, query: str | None = None
) -> plt.Figure:
    """Planning ms against data files (log-log), one panel per window (shortest first), one line
    per (format, layout, mode) with gid `line|<series label>`, each anchor in every panel (gid
    `anchor|<short name>`), and a legend panel naming them in full.

    Args:
        frame: cells with data_files, window, window_hours, format, layout, mode, planning_ms
            (and query_id: one query is drawn, `query` or else count_window or else the first).

    Raises:
        ValueError: when there is nothing to draw.
    """
    rows = _query(frame, query)
    rows = rows[(rows["planning_ms"] > 0) & (rows["data_files"] > 0)]
    if rows.empty:
        raise ValueError("no cell with planning and data files to draw")
    windows = rows.drop_duplicates("window").sort_values("window_hours")["window"].tolist()
    columns = min(3, len(windows))
    panels = math.ceil(len(windows) / columns)
    fig = plt.figure(figsize=(4.2 * columns, 3.4 * panels + 1.3))
    grid = fig.add_gridspec(panels + 1, columns, height_ratios=[*([3.4] * panels), 1.0])
    modes = sorted(map(str, rows["mode"].unique()))
    lowest = (
        min(rows["data_files"].min(), *(a.files for a in anchors)) if anchors else rows["data_files"].min()
    )
    highest = (
        max(rows["data_files"].max(), *(a.files for a in anchors)) if anchors else rows["data_files"].max()
    )
    handles: dict[str, Line2D] = {}
    for i, window in enumerate(windows):
        ax = fig.add_subplot(grid[i // columns, i % columns])
        for (fmt, layout, mode), part in rows[rows["window"] == window].groupby(
            ["format", "layout", "mode"], sort=True
        ):
            part = part.sort_values("data_files")
            label = series_label(fmt, layout, mode)
            (line,) = ax.plot(
                part["data_files"],
                part["planning_ms"],
                marker="o",
                ms=3.5,
                color=_color(fmt, layout),
                ls=LINESTYLES[modes.index(str(mode)) % len(LINESTYLES)],
                label=label,
                gid=f"line|{label}",
            )
            handles.setdefault(label, line)
        for anchor in anchors:
            mid = (anchor.low_ms + anchor.high_ms) / 2
            if anchor.high_ms > anchor.low_ms:
                ax.errorbar(
                    [anchor.files],
                    [mid],
                    yerr=[[mid - anchor.low_ms], [anchor.high_ms - mid]],
                    fmt="none",
                    ecolor="black",
                    elinewidth=1.6,
                    capsize=4,
                    gid=f"anchor|{anchor.short}",
                )
            else:
                ax.plot(
                    [anchor.files],
                    [mid],
                    ls="",
                    marker="*",
                    ms=9,
                    color="black",
                    gid=f"anchor|{anchor.short}",
                )
            ax.annotate(
                anchor.short,
                (anchor.files, anchor.high_ms),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lowest / 2, highest * 2)
        ax.set_title(f"window {window}")
        ax.set_xlabel("data files (log)")
        ax.set_ylabel("planning (ms, median; log)")
        ax.grid(True, which="both", alpha=0.25)
    legend_ax = fig.add_subplot(grid[panels, :])
    legend_ax.axis("off")
    marks = [
        Line2D(
            [],
            [],
            ls="-" if a.high_ms > a.low_ms else "",
            marker="|" if a.high_ms > a.low_ms else "*",
            color="black",
            label=a.label,
        )
        for a in anchors
    ]
    legend_ax.legend(handles=[*handles.values(), *marks], loc="center", ncol=3, fontsize=7, frameon=False)
    return fig


def planning_vs_files(
    frame: pd.DataFrame,
    run_dir: Path,
    path: Path,
    anchors: tuple[Anchor, ...] = ANCHORS,
    query: str | None = None,
    title: str = "Planning time against table size",
) -> list[Path]:
    """`draw_planning_vs_files`, titled and saved as PNG and SVG."""
    return finish(draw_planning_vs_files(frame, anchors, query), title, run_dir, path)


PLANNING_VS_FILES = "planning_vs_files.png"


def run_cells(run_dir: Path) -> pd.DataFrame:
    """A metadata_scale run's summary.csv as `draw_planning_vs_files` reads it: each cell's median
    planning with its state's data files (states.csv), layout and mode."""
    summary = pd.read_csv(run_dir / "summary.csv")
    files = pd.read_csv(run_dir / "states.csv").drop_duplicates("dataset").set_index("dataset")["data_files"]
    return summary.assign(
        data_files=summary["dataset"].map(files),
        layout=summary["profile"],
        mode=summary["variant"].str.rsplit("/", n=1).str[-1],
        planning_ms=summary["planning_ms_median"],
    )


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """A metadata_scale run's planning-vs-files chart, written into `out` (default: the run)."""
    files = planning_vs_files(run_cells(run_dir), run_dir, (out or run_dir) / PLANNING_VS_FILES)
    return [
        Chart(
            "Planning time against table size (metadata only)",
            "Median planning of count_window per state (data files, log), layout and planning mode, one "
            "panel per window; planning only, on states with no data files. The black marks are "
            "published anchors (other engines, versions and machines), not targets.",
            files,
        )
    ]
