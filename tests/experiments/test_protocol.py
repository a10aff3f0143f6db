"""The protocol: rounds, warm-ups, executions, and a failing query kept as a row."""

from __future__ import annotations

import datetime as dt

from experiments.protocol import Case, rounds, run_rounds
from experiments.variants import NO_PROFILE, Variant
from experiments.windows import parse_window
from icelab.config import ProtocolConfig


def protocol(**kw) -> ProtocolConfig:
    base = dict(
        warmups=2, repetitions=3, executions=1, unstable_iqr=0.25, overhead_pairs=0, overhead_window="1d"
    )
    return ProtocolConfig(**(base | kw))


def test_rounds_warmups_plan_only_then_executions():
    assert rounds(protocol()) == [
        (-2, True, False),
        (-1, True, False),
        (0, False, True),
        (1, False, False),
        (2, False, False),
    ]
    assert [r[2] for r in rounds(protocol(warmups=0, executions=3))] == [True, True, True]


def test_a_failing_query_is_a_row_and_the_run_goes_on(ctx, tiny):
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    variant = Variant("parquet", NO_PROFILE, tiny.dataset.parquet_table)
    bad = Case("broken", "0" * 64, window, variant, f"SELECT no_such_column FROM {variant.table}")
    good = Case("ok", "1" * 64, window, variant, f"SELECT count(*) FROM {variant.table}")
    rows, ends = [], []
    run_rounds(
        ctx.spark, [bad, good], protocol(warmups=0, repetitions=2), rows.append, lambda: ends.append(1), False
    )
    assert len(rows) == 4 and len(ends) == 2
    assert [r["status"] for r in rows] == ["error", "ok", "error", "ok"]
    assert "no_such_column" in rows[0]["error"]
    assert rows[1]["rows_out"] == 1 and rows[3]["executed"] is False


def test_ctrl_c_stops_after_the_measurement_in_flight(ctx, tiny):
    import os
    import signal

    import pytest

    window = parse_window("1d", dt.datetime(2026, 6, 30))
    variant = Variant("parquet", NO_PROFILE, tiny.dataset.parquet_table)
    case = Case("ok", "1" * 64, window, variant, f"SELECT count(*) FROM {variant.table}")
    rows, before = [], signal.getsignal(signal.SIGINT)

    def keep(row):
        rows.append(row)
        if len(rows) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # as a user's Ctrl-C: only a flag is raised

    with pytest.raises(KeyboardInterrupt):
        run_rounds(ctx.spark, [case] * 3, protocol(warmups=0, repetitions=2), keep, lambda: None, False)
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)
    assert signal.getsignal(signal.SIGINT) is before  # Spark's own handler is back
