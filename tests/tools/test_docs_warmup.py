"""The warm-up block: first over second measured execution per window and warm-up kind, from the
stored runs, and the rows their stall rules marked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from icelab.tools.docs.warmup import cell_ratios, marked, warmup_block

RESULTS = Path(__file__).resolve().parents[2] / "results"


def row(window: str, repetition: int, ms: float, **kw) -> dict:
    base = {
        "query_id": "q",
        "variant": "parquet",
        "window": window,
        "repetition": repetition,
        "warmup": False,
        "executed": True,
        "retake": 0,
        "status": "ok",
        "execution_ms": ms,
        "faults": None,
    }
    return base | kw


def test_a_cells_ratio_takes_the_first_take_of_repetitions_0_and_1():
    m = pd.DataFrame(
        [
            row("1h", -1, 50.0, warmup=True),  # a warm-up execution: not a measured one
            row("1h", 0, 400.0, faults="outlier"),
            row("1h", 0, 110.0, retake=1),  # its retake: not the first execution
            row("1h", 1, 100.0),
            row("180d", 0, 990.0),
            row("180d", 1, 1000.0),
            row("180d", 2, 5.0, executed=False),
        ]
    )
    assert cell_ratios(m).set_index("window")["ratio"].to_dict() == {"180d": 0.99, "1h": 4.0}
    assert marked(m) == 1


def test_the_block_names_the_kept_run_ci_marked_under_the_planning_only_warmup():
    lines = warmup_block(RESULTS).splitlines()
    planned = next(line for line in lines if line.startswith("| planning only |"))
    assert planned.endswith("| 13.19x (1h, `20261203T080831Z-e06a22`) | 1 (`20261203T080831Z-e06a22`) |")
    executed = next(line for line in lines if line.startswith("| executed up to 30d |"))
    assert executed.endswith("| 0 |")
