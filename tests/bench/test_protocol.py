"""The protocol: rounds, warm-ups, executions, and a failing query kept as a row."""

from __future__ import annotations

import datetime as dt

from icelab.bench.protocol import (
    Case,
    in_round,
    query_cases,
    rounds,
    run_rounds,
    settled,
    steady_summary,
    warms_execution,
)
from icelab.bench.variants import NO_PROFILE, Variant
from icelab.bench.windows import parse_window, query_ids
from icelab.core.config import ProtocolConfig


def protocol(**kw) -> ProtocolConfig:
    base = dict(
        warmups=2,
        warmups_execute=False,
        repetitions=3,
        executions=1,
        unstable_iqr=0.25,
        overhead_pairs=0,
        overhead_window="1d",
        warm_cache=False,
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
    assert [r[2] for r in rounds(protocol(warmups_execute=True))] == [True, True, True, False, False]


def test_warmups_execute_up_to_a_window_execute_only_the_shorter_ones():
    assert [r[2] for r in rounds(protocol(warmups_execute="30d"))] == [True, True, True, False, False]
    variant = Variant("iceberg", NO_PROFILE, "t")
    end = dt.datetime(2026, 6, 30)
    by_window = {
        name: Case("q", "sha", parse_window(name, end), variant, "select 1")
        for name in ("1h", "1d", "30d", "90d", "180d")
    }
    up_to_30d = protocol(warmups_execute="30d")
    assert [n for n, c in by_window.items() if warms_execution(up_to_30d, c)] == ["1h", "1d", "30d"]
    assert all(warms_execution(protocol(warmups_execute=True), c) for c in by_window.values())
    assert not any(warms_execution(protocol(), c) for c in by_window.values())


def test_rotation_moves_each_query_to_another_first_variant():
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    variants = [Variant("iceberg", NO_PROFILE, "t", setup=s) for s in ("a", "b", "c")]
    ids = query_ids(["q01", "q02", "q03", "q04"])
    found = query_cases([(q, window) for q in ids], variants, rotate=True)
    firsts = [found[i].variant.setup for i in range(0, len(found), 3)]
    assert firsts == ["a", "b", "c", "a"]
    assert all({c.variant.setup for c in found[i : i + 3]} == {"a", "b", "c"} for i in range(0, 12, 3))


def test_each_round_rotates_the_variants_within_each_query():
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    variants = [Variant("iceberg", NO_PROFILE, "t", setup=s) for s in ("a", "b", "c")]
    cases = query_cases([(q, window) for q in query_ids(["q01", "q02"])], variants, rotate=True)
    orders = [[(c.query_id[:3], c.variant.setup) for c in in_round(cases, r)] for r in range(-1, 3)]
    assert orders[1] == [(c.query_id[:3], c.variant.setup) for c in cases]  # round 0: as built
    assert orders[2] == [("q01", s) for s in "bca"] + [("q02", s) for s in "cab"]
    assert orders[0] == [("q01", s) for s in "cab"] + [("q02", s) for s in "abc"]  # a warm-up, -1
    # Over any 3 consecutive rounds every variant leads each query once.
    for q in ("q01", "q02"):
        assert sorted(next(s for qq, s in o if qq == q) for o in orders[1:]) == ["a", "b", "c"]


def test_the_rounds_alternate_which_variant_of_a_query_runs_first(ctx, tiny):
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    sql = f"SELECT count(*) FROM {tiny.dataset.parquet_table}"
    cases = [
        Case("q", "1" * 64, window, Variant("parquet", NO_PROFILE, tiny.dataset.parquet_table, setup=s), sql)
        for s in ("a", "b")
    ]
    rows = []
    run_rounds(
        ctx.spark, cases, protocol(warmups=1, repetitions=2, executions=0), rows.append, lambda: None, False
    )
    assert [(r["repetition"], r["variant"]) for r in rows] == [
        (-1, "parquet/b"),
        (-1, "parquet/a"),
        (0, "parquet/a"),
        (0, "parquet/b"),
        (1, "parquet/b"),
        (1, "parquet/a"),
    ]


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


def test_settled_when_the_last_k_agree_within_the_tolerance():
    assert settled([400.0, 300.0, 250.0, 240.0, 250.0], k=3, tolerance=0.05)  # 10 / 250 = 4%
    assert not settled([400.0, 300.0, 250.0, 240.0, 260.0], k=3, tolerance=0.05)  # 20 / 250 = 8%
    assert not settled([250.0, 250.0], k=3, tolerance=0.05)  # fewer than k
    assert not settled([0.0, 0.0, 0.0], k=3, tolerance=0.05)


def test_steady_state_executes_each_case_until_it_settles_or_the_cap(ctx, tiny):
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    variant = Variant("parquet", NO_PROFILE, tiny.dataset.parquet_table)
    good = Case("ok", "1" * 64, window, variant, f"SELECT count(*) FROM {variant.table}")
    bad = Case("broken", "0" * 64, window, variant, f"SELECT no_such_column FROM {variant.table}")

    def steady(**kw) -> tuple[list[dict], dict]:
        rows, record = [], {}
        run_rounds(
            ctx.spark,
            [good, bad],
            protocol(warmups=1, repetitions=1, steady_cap=4, **kw),
            rows.append,
            lambda: None,
            False,
            on_steady=record.update,
        )
        return rows, record

    # Any spread agrees: each good case stops after k; the broken one stops at its error.
    rows, record = steady(steady_k=2, steady_tolerance=100.0)
    ok, broken = record["cases"]
    assert (ok["warmups"], ok["settled"], broken["warmups"], broken["settled"]) == (2, True, 0, False)
    assert "no_such_column" in broken["error"]
    assert record["rows"] == 3 and len(rows) == 2 + 3 + 2  # warm-up round, steady phase, measured round
    steady_rows = rows[2:5]
    assert [(r["query_id"], r["repetition"], r["warmup"], r["executed"]) for r in steady_rows] == [
        ("ok", -2, True, True),
        ("ok", -3, True, True),
        ("broken", -2, True, False),
    ]
    assert [r["warmup"] for r in rows[5:]] == [False, False]

    # No two executions agree exactly: the cap ends it, and the case says it never settled.
    _, record = steady(steady_k=2, steady_tolerance=1e-12)
    assert (record["cases"][0]["warmups"], record["cases"][0]["settled"]) == (4, False)
    assert record["cases"][0]["spread"] > 0
    assert "steady state: 0 of 2 cases settled" in steady_summary(record["cases"], protocol(steady_k=2))


def test_steady_k_above_the_cap_is_refused():
    import pytest

    with pytest.raises(ValueError, match=r"steady_k \(5\) exceeds steady_cap \(4\)"):
        protocol(steady_k=5, steady_cap=4)


def test_a_planted_slowdown_names_queries_by_id_or_full_name():
    variant = Variant("iceberg", "as_ingested", "t", setup="b", plant={"q03": 0.25, "q07_full_name": 0.1})
    assert variant.slow_by("q03_anything") == 0.25 and variant.slow_by("q07_full_name") == 0.1
    assert variant.slow_by("q04_other") == 0.0 and Variant("parquet", NO_PROFILE, "t").slow_by("q03_x") == 0
