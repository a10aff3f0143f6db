"""The distributed/local ratios are binned by the entries local planning matched: a median and a
count per bin, a cell with no ratio (an error row) left out."""

from __future__ import annotations

import math

from icelab.analysis.scale_states import by_matched


def test_each_bin_gets_its_median_and_how_many_cells_were_faster():
    bins = by_matched([0.5, 2.0, 3.0, math.nan, 0.9], [5, 50_000, 60_000, 10, 2_000_000])
    assert [(b["low"], b["high"]) for b in bins] == [(0, 9_999), (10_000, 99_999), (1_000_000, None)]
    assert [b["median"] for b in bins] == [0.5, 2.5, 0.9]
    assert [(b["cells"], b["faster"]) for b in bins] == [(1, 1), (2, 0), (1, 1)]


def test_no_cell_with_both_modes_is_no_bin():
    assert by_matched([], []) == []
    assert by_matched([math.nan], [5]) == []
