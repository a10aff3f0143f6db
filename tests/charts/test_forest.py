"""The forest plot of a comparison: every cell drawn, the effects named."""

from __future__ import annotations

import numpy as np
import pytest

from icelab.analysis import effect_intervals
from icelab.analysis.comparison import compare
from icelab.charts.forest import forest_chart
from tests.analysis.test_effect_intervals import QUERIES, session


def test_the_forest_plot_draws_every_cell_and_colours_the_effects(tmp_path):
    rng = np.random.default_rng(11)
    table = compare([session(rng)], [session(rng, {"q03": 1.5})])
    files = forest_chart(table, "execution_ms", 0.1, "test", tmp_path, tmp_path / "forest.png")
    svg = next(p for p in files if p.suffix == ".svg").read_text()
    assert all(f"{q} · iceberg/optimized · 1d" in svg for q in QUERIES)
    assert (
        svg.count(effect_intervals.FASTER) == 0 and effect_intervals.SLOWER in svg
    )  # the legend names what is shown
    with pytest.raises(ValueError, match="no planning_ms cell"):
        forest_chart(table.iloc[0:0], "planning_ms", 0.1, "test", tmp_path, tmp_path / "none.png")
