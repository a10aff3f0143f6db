"""The stall looks' verdict lines (icelab.tools.docs.reliability_page), from the stored runs."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.docs.reliability_page import stall_table

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_the_first_look_names_the_two_cells_it_rejects():
    text = stall_table(RESULTS, "stalls")
    assert text.startswith("Within the session's noise: **8 of 10** stalled cells; not: ")
    assert "execution_ms in `store-stopped` (ratio 0.65, band 0.75-1.54)" in text
    assert "execution_ms in `executor-stopped`" in text
    assert "`results/reference/stalls/<stall>/`" in text


def test_the_third_look_passes_every_cell():
    text = stall_table(RESULTS, "stalls-executed")
    assert text.startswith("Within the session's noise: **10 of 10** stalled cells.\n")
    assert "marked 10 rows and measured 10 again; every run completed" in text
