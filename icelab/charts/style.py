"""One look for every chart: font sizes, a colour per format and setup, a provenance footer,
and each figure saved as both PNG and SVG."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402

from icelab.core.results import atomic_path  # noqa: E402

plt.rcParams.update(
    {
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "legend.fontsize": 8,
        "xtick.labelsize": 8,
        "ytick.labelsize": 8,
        "figure.titlesize": 11,
        "savefig.dpi": 120,
        # SVG text stays text (smaller, searchable), and ids are stable so a redraw diffs cleanly.
        "svg.fonttype": "none",
        "svg.hashsalt": "icelab",
    }
)

PARQUET = "parquet"
# (dark, light) per format: the dark shade is the line, or planning in a stacked bar.
FORMAT_COLORS = {PARQUET: ("#1f4e79", "#8db3e2"), "iceberg": ("#7f3f00", "#f4b183")}
# Iceberg table states (profiles) and reading setups, so a setup keeps its colour on every chart.
STATE_COLORS = {
    "as_ingested": "#c55a11",
    "initial": "#c55a11",
    "rewrite_8mb": "#548235",
    "optimized": "#548235",
    "vectorization": "#7030a0",
    "nested_pruning": "#bf9000",
    "manifest_rewrite": "#2e75b6",
    "snapshot_expiry": "#c00000",
    "rewrite_32mb": "#7f7f7f",
    "rewrite_2mb": "#00b0f0",
    "rewrite_512kb": "#ff66cc",
    "rewrite_256kb": "#00a087",
    "rewrite_128kb": "#8b4513",
    "aggregate_pushdown": "#404040",
}
# Schema-evolution outcomes.
OUTCOME_COLORS = {"safe": "#c6efce", "hazard": "#ffd28c", "rejected": "#d9d9d9"}
_FALLBACK = plt.get_cmap("tab20").colors


def color(variant: str) -> str | tuple[float, ...]:
    """The colour of a variant (`parquet`, `iceberg/<state>`) on every chart; unknown states get a
    stable colour of their own."""
    fmt, _, state = variant.partition("/")
    if not state:
        return FORMAT_COLORS.get(fmt, FORMAT_COLORS[PARQUET])[0]
    if state in STATE_COLORS:
        return STATE_COLORS[state]
    return _FALLBACK[zlib.crc32(state.encode()) % len(_FALLBACK)]


def provenance(run_dir: Path) -> str:
    """One line naming where a chart's numbers come from: experiment, dataset, run and commit."""
    env_path = run_dir / "env.json"
    env = json.loads(env_path.read_text()) if env_path.is_file() else {}
    ds = env.get("dataset") or {}
    dataset = f"{ds['name']}-{ds.get('hash', '?')}" if ds.get("name") else "own tables"
    git = env.get("git") or {}
    commit = (git.get("commit") or "unknown")[:7] + (" (dirty)" if git.get("dirty") else "")
    return f"{run_dir.parent.name} | dataset {dataset} | run {run_dir.name} | commit {commit}"


def save(fig: plt.Figure, path: Path) -> list[Path]:
    """Write `fig` as `<path>.png` and `<path>.svg` (any suffix of `path` is replaced), then close it."""
    paths = [path.with_suffix(".png"), path.with_suffix(".svg")]
    # Through a temporary name and a rename, like every results file; the format is named
    # because the temporary name's suffix is not the real one.
    with atomic_path(paths[0]) as tmp:
        fig.savefig(tmp, format="png")
    with atomic_path(paths[1]) as tmp:
        fig.savefig(tmp, format="svg", metadata={"Date": None})  # no timestamp: same data, same file
    plt.close(fig)
    return paths


def finish(fig: plt.Figure, title: str, run_dir: Path, path: Path) -> list[Path]:
    """Title, provenance footer, layout, then `save`."""
    fig.suptitle(title)
    fig.text(0.005, 0.004, provenance(run_dir), fontsize=7, color="#595959", ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return save(fig, path)
