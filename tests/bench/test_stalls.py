"""Stalls nobody injected through the store (icelab/bench/stalls.py): the rules on rows, and a
planted stall in a real measurement, without the delay proxy, found, marked and measured again."""

from __future__ import annotations

import datetime as dt

import pytest

from icelab.bench import stalls, task_clock
from icelab.bench.protocol import Case, run_rounds
from icelab.bench.variants import NO_PROFILE, Variant
from icelab.bench.windows import parse_window
from icelab.core import failpoints
from tests.bench.test_protocol import protocol


def _row(**kw) -> dict:
    base = {"dataset": "d", "query_id": "q", "variant": "v", "window": "1d", "warmup": False, "status": "ok"}
    return base | kw


def test_planning_the_iceberg_clock_does_not_explain_is_a_stall():
    assert stalls.row_marks(_row(planning_ms=20_615.0, iceberg_planning_ms=130.0)) == ["stall=20.5"]
    assert stalls.row_marks(_row(planning_ms=1_900.0, iceberg_planning_ms=1_500.0)) == []
    assert stalls.row_marks(_row(planning_ms=900.0, iceberg_planning_ms=None)) == []


def test_a_store_request_that_stood_still_is_a_stall():
    assert stalls.row_marks(_row(execution_ms=60_166.0, s3_longest_ms=60_012.0)) == ["stall=60.0"]
    # The longest did not rise (an earlier stall holds the session's maximum): the mean shows it.
    assert stalls.row_marks(_row(s3_longest_ms=None, s3_request_ms=61_000.0, s3_requests=20)) == ["stall=3.0"]
    assert stalls.row_marks(_row(s3_longest_ms=180.0, s3_request_ms=2_000.0, s3_requests=200)) == []


def test_a_process_that_stood_still_is_a_stall():
    # The driver JVM stopped 20 s: its sleeper overslept (Hadoop's JvmPauseMonitor), while the
    # execution it paused has no clock of its own to compare.
    assert stalls.row_marks(_row(execution_ms=20_345.0, pause_ms=20_012.0)) == ["stall=20.0"]
    assert stalls.row_marks(_row(execution_ms=20_345.0, pause_ms=0.0)) == []


def test_the_proxys_longest_request_and_a_task_off_the_cpu_are_stalls():
    assert stalls.row_marks(_row(execution_ms=60_300.0, proxy_longest_ms=60_040.0)) == ["stall=60.0"]
    assert stalls.row_marks(_row(execution_ms=300.0, proxy_longest_ms=62.0)) == []
    # A stopped executor: one task of its stage stood off the CPU 20 s beyond the others.
    assert stalls.row_marks(_row(execution_ms=20_400.0, task_stall_ms=20_010.0)) == ["stall=20.0"]
    assert stalls.row_marks(_row(execution_ms=2_400.0, task_stall_ms=150.0)) == []


def test_a_task_stall_is_beyond_the_rest_of_its_stage():
    assert task_clock.beyond_the_rest([10.0, 12.0, 20_011.0, 11.0]) == 20_000.0
    assert task_clock.beyond_the_rest([10.0]) is None
    # Tasks that read a store wait on it unevenly: 2.2 s above a 1.5 s median is not 3 times it.
    # The first rule, without the ratio, marked a task 2.2 s beyond the rest of its stage in a
    # clean run on the store (results/reference/stalls-tuning/task-rule-v1).
    assert task_clock.beyond_the_rest([1_400.0, 1_500.0, 3_700.0, 1_600.0]) == 0.0


def test_garbage_collection_marks_only_when_it_is_most_of_the_time():
    assert stalls.row_marks(_row(total_ms=2_000.0, gc_ms=1_500.0)) == ["gc=1.5"]
    assert stalls.row_marks(_row(total_ms=10_000.0, gc_ms=1_500.0)) == []
    assert stalls.row_marks(_row(total_ms=300.0, gc_ms=200.0)) == []


def test_an_outlier_is_far_above_the_rest_of_its_cell():
    cell = [_row(planning_ms=ms, repetition=i) for i, ms in enumerate([40.0, 42.0, 41.0, 3_000.0])]
    assert stalls.outliers(cell) == [cell[3]]
    # Three times the rest but not a second above it: noise on a shared machine, not a stall.
    noisy = [_row(planning_ms=ms, repetition=i) for i, ms in enumerate([40.0, 42.0, 41.0, 300.0])]
    assert stalls.outliers(noisy) == []
    # Another cell's rows are not its rest; nor are warm-ups or marked rows.
    alone = [
        _row(planning_ms=3_000.0),
        _row(planning_ms=40.0, window="7d"),
        _row(planning_ms=40.0, warmup=True),
    ]
    assert stalls.outliers([*alone, _row(planning_ms=40.0, faulted=True)]) == []


def _case(tiny, fmt: str) -> Case:
    window = parse_window("1d", dt.datetime(2026, 6, 30))
    table = tiny.dataset.iceberg_table if fmt == "iceberg" else tiny.dataset.parquet_table
    return Case("ok", "1" * 64, window, Variant(fmt, NO_PROFILE, table), f"SELECT count(*) FROM {table}")


@pytest.mark.parametrize(
    ("fmt", "where", "reason"),
    [("iceberg", "", "stall"), ("parquet", "@jvm", "outlier")],
    ids=["iceberg: its own clock", "parquet: against its cell"],
)
def test_a_planted_stall_is_marked_and_measured_again(ctx, tiny, monkeypatch, capsys, fmt, where, reason):
    # The third measured plan stands still 3 s before planning starts: in Python (Iceberg's clock
    # does not count it) or in the JVM thread (nothing but its cell tells it apart).
    failpoints._hits.clear()
    monkeypatch.setenv("ICELAB_STALL_AT", f"measure.plan:3+3{where}")
    rows: list[dict] = []
    keep = lambda row: rows.append(dict(row)) or rows[-1]  # noqa: E731 (the recorder's contract)
    run_rounds(ctx.spark, [_case(tiny, fmt)], protocol(warmups=0, repetitions=4), keep, lambda: None, False)
    stalled = [r for r in rows if r["faulted"]]
    assert [(r["repetition"], r["retake"]) for r in stalled] == [(2, 0)]
    assert stalled[0]["faults"].split("=")[0] == reason
    assert stalled[0]["planning_ms"] >= 3_000
    again = [r for r in rows if r["retake"] == 1]
    assert [(r["repetition"], r["faulted"]) for r in again] == [(2, False)]
    # A row its own clocks marked is measured again in its own round; an outlier, known only
    # against its whole cell, after the rounds.
    order = {"stall": [0, 1, 2, 2, 3], "outlier": [0, 1, 2, 3, 2]}[reason]
    assert [r["repetition"] for r in rows] == order
    # The cell keeps its n: four unmarked measured plans.
    assert sum(1 for r in rows if not r["faulted"]) == 4
    said = {"stall": "1 stall, 0 gc, 0 outlier", "outlier": "0 stall, 0 gc, 1 outlier"}[reason]
    assert f"marked: {said} (left out of medians); 1 measured again" in capsys.readouterr().out


def test_the_proxys_tally_is_not_a_clocks_mark():
    # The delay proxy counts the requests it held (`stall=2`); a clock's mark gives seconds.
    assert stalls.reasons({"faults": "stall=2"}) == []
    assert stalls.reasons({"faults": "slowdown=1,stall=20.5,outlier"}) == ["stall", "outlier"]
    assert stalls.counts([{"faults": "gc=1.5"}, {"faults": None}]) == {"stall": 0, "gc": 1, "outlier": 0}


def test_a_garbage_collection_storm_is_marked_gc(ctx, tiny, monkeypatch):
    # The driver JVM (local mode: also the executor) collects back to back for 4 s from the
    # start of the second measured plan's execution: its row is marked gc and measured again.
    failpoints._hits.clear()
    monkeypatch.setenv("ICELAB_PAUSE_AT", "protocol.measurement:1@jvm-gc/4")
    rows: list[dict] = []
    keep = lambda row: rows.append(dict(row)) or rows[-1]  # noqa: E731 (the recorder's contract)
    cases = [_case(tiny, "parquet")]
    run_rounds(ctx.spark, cases, protocol(warmups=0, repetitions=3), keep, lambda: None, False)
    stormed = [r for r in rows if stalls.reasons(r)]
    assert [r["repetition"] for r in stormed] == [1], rows
    # On a loaded machine a stall clock of the same row can also reach STALL_MS while the JVM
    # collects, and marks it `stall` too (seen once, with six test workers on 2 cores).
    assert "gc" in stalls.reasons(stormed[0]), rows
    assert [r["repetition"] for r in rows if r["retake"] == 1] == [1]
