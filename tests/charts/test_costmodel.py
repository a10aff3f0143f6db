"""The cost-model charts draw what they are given: every point and line, the held-out points in
artists of their own, the y = x band, and the two published anchors where they belong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icelab.analysis.planning_cells import cells
from icelab.analysis.planning_model import holdout
from icelab.charts.costmodel import (
    ANCHORS,
    draw_planning_vs_files,
    draw_scatter,
    planning_vs_files,
    scatter_chart,
)
from icelab.charts.style import plt
from tests.analysis.test_planning_model import SIZES, TARGETS, WINDOWS, synthetic


@pytest.fixture(scope="module")
def checked():
    frame, states, windows = synthetic()
    reference, _, _ = synthetic({"medium-4149ea9e8a87": 35_913}, seed=3, setup=False)
    return holdout(frame, states, windows, reference=[reference]), cells(frame, states, windows)


def points_of(check) -> pd.DataFrame:
    return pd.concat(
        [
            check.fitted.assign(kind="fitted"),
            check.held_out.assign(kind="held out"),
            check.reference.assign(kind="reference"),
        ],
        ignore_index=True,
    )


def by_gid(ax: plt.Axes, prefix: str) -> dict[str, np.ndarray]:
    """The offsets of each scatter artist whose gid starts with `prefix`."""
    return {
        c.get_gid(): np.asarray(c.get_offsets())
        for c in ax.collections
        if (c.get_gid() or "").startswith(prefix)
    }


def test_the_scatter_draws_every_cell_and_keeps_held_out_points_apart(checked):
    check, _ = checked
    points = points_of(check)
    fig = draw_scatter(points)
    ax = fig.axes[0]
    held = by_gid(ax, "held out|")
    fitted = by_gid(ax, "fitted|")
    reference = by_gid(ax, "reference|")
    # One artist per (layout, mode): 3 layouts x 2 Iceberg modes + 2 Parquet listing modes.
    assert len(held) == len(fitted) == 2 * len(TARGETS) + 2
    assert "held out|rewrite_8mb · local" in held and "held out|parquet · listing_serial" in held
    assert sum(len(v) for v in held.values()) == len(check.held_out) == (2 * len(TARGETS) + 2) * len(WINDOWS)
    assert sum(len(v) for v in fitted.values()) == len(check.fitted)
    assert sum(len(v) for v in reference.values()) == len(check.reference)
    # The held-out points are the 10M cells, drawn at (measured, predicted), hollow.
    drawn = np.concatenate(list(held.values()))
    expected = check.held_out[["planning_ms", "predicted_ms"]].to_numpy(float)
    assert np.allclose(np.sort(drawn, axis=0), np.sort(expected, axis=0))
    for collection in ax.collections:
        if (collection.get_gid() or "").startswith("held out|"):
            assert len(collection.get_facecolors()) == 0  # hollow
    identity = next(line for line in ax.lines if line.get_gid() == "identity")
    assert np.allclose(identity.get_xdata(), identity.get_ydata())
    band = next(c for c in ax.collections if c.get_gid() == "band")
    x, y = band.get_paths()[0].vertices.T
    assert np.allclose(np.sort(y / x)[[0, -1]], [0.75, 1.25])
    plt.close(fig)


def test_the_scatter_is_saved_and_says_what_it_shows(checked, tmp_path):
    check, _ = checked
    files = scatter_chart(points_of(check), tmp_path, tmp_path / "scatter.png")
    assert [p.suffix for p in files] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in files)
    svg = files[1].read_text()
    assert "held out" in svg and "within ±25%" in svg and 'id="held out|as_ingested · local"' in svg
    with pytest.raises(ValueError, match="no point"):
        draw_scatter(points_of(check).assign(predicted_ms=-1.0))


def test_planning_vs_files_draws_a_line_per_layout_and_mode_in_a_panel_per_window(checked, tmp_path):
    _, table = checked
    fig = draw_planning_vs_files(table)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("window ")]
    assert [ax.get_title() for ax in panels] == [f"window {w}" for w in WINDOWS]  # shortest first
    for ax, window in zip(panels, WINDOWS, strict=True):
        lines = {line.get_gid(): line for line in ax.lines if (line.get_gid() or "").startswith("line|")}
        assert len(lines) == 2 * len(TARGETS) + 2
        local = lines["line|rewrite_8mb · local"]
        assert list(local.get_xdata()) == sorted(SIZES.values())
        expected = table[
            (table["window"] == window) & (table["layout"] == "rewrite_8mb") & (table["mode"] == "local")
        ].sort_values("data_files")["planning_ms"]
        assert np.allclose(local.get_ydata(), expected)
        # LHBench: a vertical bar at 200k files from 3.9 to 4.3 s; PR #8123: a point at 20M files, 1 s.
        bar = next(c for c in ax.collections if c.get_gid() == "anchor|LHBench")
        assert np.allclose(bar.get_segments()[0], [[200_000, 3_900], [200_000, 4_300]])
        star = next(line for line in ax.lines if line.get_gid() == "anchor|PR #8123")
        assert (list(star.get_xdata()), list(star.get_ydata())) == ([20_000_000], [1_000])
        assert ax.get_xlim()[1] > 20_000_000
    plt.close(fig)
    svg = planning_vs_files(table, tmp_path, tmp_path / "files.png")[1].read_text()
    for anchor in ANCHORS:
        assert anchor.label in svg


def test_planning_vs_files_draws_one_query(checked):
    _, table = checked
    other = table.assign(query_id="nested_filter_window", planning_ms=table["planning_ms"] * 2)
    fig = draw_planning_vs_files(pd.concat([other, table]))
    ax = next(ax for ax in fig.axes if ax.get_title() == "window 1d")
    line = next(line for line in ax.lines if line.get_gid() == "line|as_ingested · local")
    expected = table[
        (table["window"] == "1d") & (table["layout"] == "as_ingested") & (table["mode"] == "local")
    ]
    assert np.allclose(line.get_ydata(), expected.sort_values("data_files")["planning_ms"])  # count_window's
    plt.close(fig)
