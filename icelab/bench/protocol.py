"""The measuring protocol: warm-up rounds, then measured rounds, each visiting every case once.

Rounds, rather than N repetitions of one case in a row, spread slow drifts of a shared
machine over every variant alike. A round's order is fixed (query, window, variant), so two
runs of one config do the same work in the same order.

A query keeps getting faster over its first executions in a session (JIT, caches), so with
`protocol.steady_k` each case, after the warm-up rounds, executes back to back until its last k
total times agree within `protocol.steady_tolerance`, as pyperf calibrates its warm-ups; a case
that reaches `protocol.steady_cap` without settling is reported, not hidden.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import itertools
import signal
import statistics
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.bench import stalls
from icelab.bench.cluster_watch import ClusterWatch
from icelab.bench.jvm_clock import JvmClock
from icelab.bench.measure import SessionEnded, measure, out_of_memory
from icelab.bench.stalls import counts, counts_text, mark, row_marks
from icelab.bench.store_watch import OUTAGE, StoreWatch
from icelab.bench.task_clock import TaskClock
from icelab.bench.variants import Variant, settings
from icelab.bench.windows import Window, load_query, render
from icelab.core import failpoints, run_state
from icelab.core.config import ProtocolConfig, window_length
from icelab.core.errors import UserError
from icelab.core.jvm import stop_jvm


@dataclass(frozen=True)
class Case:
    """One query over one window on one table variant."""

    query_id: str
    query_sha256: str
    window: Window
    variant: Variant
    sql: str


def cases(query_ids: list[str], windows: list[Window], variants: list[Variant]) -> list[Case]:
    """Every (query, window, variant), in the fixed order of a round."""
    return query_cases([(q, w) for q in query_ids for w in windows], variants)


def query_cases(
    queries: list[tuple[str, Window]], variants: list[Variant], rotate: bool = False
) -> list[Case]:
    """Every (query at its window, variant), in the given order of queries.

    With `rotate`, query i visits the variants starting at the i-th (mod their number): a
    variant's position within a query then changes from query to query, so whatever the
    first (or last) execution of a query pays is shared by every variant, not charged to one.
    """
    out = []
    for i, (query_id, window) in enumerate(queries):
        template = load_query(query_id)
        sha = hashlib.sha256(template.encode()).hexdigest()
        shift = i % len(variants) if rotate and variants else 0
        for variant in variants[shift:] + variants[:shift]:
            out.append(Case(query_id, sha, window, variant, render(template, variant.table, window)))
    return out


def in_round(cases: list[Case], repetition: int) -> list[Case]:
    """The cases in the order round `repetition` visits them: each block of consecutive cases of
    one (query, window) rotated by the round's number, so that over the rounds every variant of a
    query goes first (and last) equally often.

    The second of two back-to-back executions of a query runs faster (its files and code paths
    are warm); a fixed order within a query would charge that to one variant of every cell (an A
    against A of one setup under two names had cells flagged both ways so, in one session).
    """
    out: list[Case] = []
    for _, block in itertools.groupby(cases, key=lambda c: (c.query_id, c.window.name)):
        block = list(block)
        shift = repetition % len(block)
        out += block[shift:] + block[:shift]
    return out


def rounds(protocol: ProtocolConfig) -> list[tuple[int, bool, bool]]:
    """(repetition, warmup, execute) per round: warm-ups count up from -warmups to -1.

    Warm-ups prime the JVM and the metadata paths; they plan only unless
    `protocol.warmups_execute` (a window name: `warms_execution` says which cases). The first
    `protocol.executions` measured rounds also run the query to completion.
    """
    warm_execute = protocol.warmups_execute is not False
    warm = [(r - protocol.warmups, True, warm_execute) for r in range(protocol.warmups)]
    return warm + [(r, False, r < protocol.executions) for r in range(protocol.repetitions)]


def warms_execution(protocol: ProtocolConfig, case: Case) -> bool:
    """Whether a warm-up round executes `case`: every case with `warmups_execute` true; with a
    window name, the cases whose window is at most that long.

    A session's first execution of a short window runs its code cold; by the long windows, which
    dominate a round's cost, the session is warm (docs/protocol.md, "Warm-up", per window).
    Executing the short ones warms those paths for a fraction of a round.
    """
    limit = protocol.warmups_execute
    if isinstance(limit, bool):
        return limit
    length = window_length(limit)
    return length is None or case.window.end - case.window.start <= length


def settled(totals: list[float], k: int, tolerance: float) -> bool:
    """Whether the last `k` of `totals` agree: (max - min) / median at most `tolerance`."""
    if k < 1 or len(totals) < k:
        return False
    last = totals[-k:]
    middle = statistics.median(last)
    return middle > 0 and (max(last) - min(last)) / middle <= tolerance


def steady_summary(cases: list[dict[str, Any]], protocol: ProtocolConfig) -> str:
    """One line on the steady-state phase: how many settled, after how many executions, which not."""
    done = [c for c in cases if c["settled"]]
    needed = statistics.median(c["warmups"] for c in done) if done else 0
    line = (
        f"steady state: {len(done)} of {len(cases)} cases settled (last {protocol.steady_k} within "
        f"{protocol.steady_tolerance:.0%}; median {needed:g} executions, cap {protocol.steady_cap})"
    )
    unsettled = [c for c in cases if not c["settled"]]
    if unsettled:
        shown = "; ".join(
            f"{c['query_id']} {c['variant']} {c['window']} ({c.get('error') or format(c['spread'], '.0%')})"
            for c in unsettled[:5]
        )
        more = f" and {len(unsettled) - 5} more" if len(unsettled) > 5 else ""
        line += f"; not settled: {shown}{more}"
    return line


def row_of(case: Case, repetition: int, warmup: bool, measurement: Any) -> dict[str, Any]:
    """A contract row for one measurement of one case (run-level columns added by the caller)."""
    hours = (case.window.end - case.window.start) / dt.timedelta(hours=1)
    return {
        "query_id": case.query_id,
        "query_sha256": case.query_sha256,
        "format": case.variant.format,
        "profile": case.variant.profile,
        "setup": case.variant.setup,
        "variant": case.variant.label,
        "window": case.window.name,
        "window_hours": hours,
        "repetition": repetition,
        "warmup": warmup,
        **measurement.as_row(),
        "measured_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
    }


@contextmanager
def stop_requests() -> Iterator[dict[str, bool]]:
    """First Ctrl-C (or SIGTERM) asks to stop after the measurement in flight; a second aborts.

    A signal landing inside a py4j call would break the call and lose the measurement, so
    the handler only raises a flag, which the loop checks between measurements.
    """
    state = {"stop": False}
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def ask(signum: int, frame: Any) -> None:
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True
        print("icelab: stopping after the current measurement (again to abort)", file=sys.stderr)

    previous = {sig: signal.signal(sig, ask) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield state
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_rounds(
    spark: SparkSession,
    all_cases: list[Case],
    protocol: ProtocolConfig,
    keep: Callable[[dict[str, Any]], None],
    end_of_round: Callable[[], None],
    progress: bool = True,
    data_uri: str | None = None,
    on_steady: Callable[[dict[str, Any]], None] | None = None,
    reopen: Callable[[], SparkSession] | None = None,
    fresh_jvm: bool = False,
    ruled: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> None:
    """Measure every case in every round; `keep` gets each row, `end_of_round` follows each round.

    The outlier rule runs once the measured rounds are over, or when measuring stops before
    then (Ctrl-C, a lost store, an error): `ruled` gets its name and the rows it marked, so that
    a recorder can keep the marks before the retakes start (`recorder.recover` applies the rule
    itself to a run killed before it ran).

    With `protocol.steady_k`, the steady-state phase runs between the warm-up rounds and the
    measured ones; its rows are warm-ups numbered on below the warm-up rounds (-warmups - 1,
    -warmups - 2, ... per case), and `on_steady` gets its record (`steady_state` of run.json).
    With `data_uri` on S3A (storage=object), each row gets the S3 requests and retries its
    measurement sent (`s3_*` columns, S3A's own counters read before and after, outside the timed
    sections) and the faults the delay proxy dealt it (`faults`, `faulted`: `StoreWatch`).
    A measurement that ended the driver JVM (`protocol.timeout_grace_s` past `timeout_s`) is kept
    as its error row; `reopen` then gives the session the remaining cases run in. So does one
    that ran out of driver heap (its row begins `contract.OUT_OF_MEMORY`), when there is a
    `reopen`; without one the run goes on in the same session. With `fresh_jvm`, every
    measurement gets a new session (`reopen`) first: a driver JVM of its own. A measurement that
    failed because the store stopped answering is kept as its error row, marked `faults=outage`;
    the store then has `storage.outage_wait_s` to come back (`StoreWatch.outage`) before the next.
    A measurement that lost a worker of the standalone cluster icelab started is marked
    `worker_lost` (`ClusterWatch`); with no worker left, the run ends there.

    Raises:
        KeyboardInterrupt: after the measurement in flight when a stop was requested.
        UserError: a measurement ended the driver JVM and there is no `reopen`.
        RunInterrupted: the store stopped answering and was not back within its bound, or the
            cluster lost its last worker.
    """
    plan = rounds(protocol)
    watch, clock, tasks = StoreWatch(spark, data_uri), JvmClock(spark), TaskClock(spark)
    workers = ClusterWatch()
    measured_rows: list[dict[str, Any]] = []
    if fresh_jvm and reopen is None:
        raise UserError("fresh_jvm needs a way to open a new session (reopen)")

    def renew(jvm_gone: bool = False) -> None:
        """Go on in the session `reopen` opens, after ending the current one and its driver JVM
        (unless `jvm_gone`: the measurement already ended it)."""
        nonlocal spark, watch, clock, tasks
        assert reopen is not None
        if not jvm_gone:
            with contextlib.suppress(Exception):  # a JVM already in trouble still gets ended below
                spark.stop()
            stop_jvm()
        spark = reopen()
        watch, clock, tasks = StoreWatch(spark, data_uri), JvmClock(spark), TaskClock(spark)

    def one(case: Case, repetition: int, warmup: bool, execute: bool, retake: int = 0) -> dict[str, Any]:
        if fresh_jvm:
            renew()
        run_state.doing(f"measuring {case.query_id} {case.variant.label} {case.window.name}")
        before, gc_before, paused_before = watch.snapshot(), clock.gc_ms(), clock.pause_ms()
        ended = None
        try:
            with settings(spark, case.variant), workers.during(spark), tasks.during():
                measured = measure(
                    spark,
                    case.sql,
                    execute=execute,
                    slow_by=case.variant.slow_by(case.query_id),
                    timeout_s=protocol.timeout_s,
                    grace_s=protocol.timeout_grace_s,
                )
        except SessionEnded as gone:
            measured, ended = gone.measurement, gone
        row = row_of(case, repetition, warmup, measured) | {"retake": retake}
        where = f"{case.query_id} {case.variant.label} {case.window.name}"
        lost = ended is None and watch.lost(measured)
        if ended is None:
            row |= (
                watch.since(before)
                | {"gc_ms": float(clock.gc_ms() - gc_before), "pause_ms": clock.pause_ms() - paused_before}
                | {"task_stall_ms": tasks.stall_ms(row.get("total_ms") or row.get("planning_ms"))}
                | (OUTAGE if lost else {})
            )
            mark(row, row_marks(row))
        marked, workers_lost = workers.mark(row)
        # The row as kept, so that a mark found later (an outlier) reaches what is written.
        stored = keep(marked) or marked
        if not warmup:
            measured_rows.append(stored)
        if workers_lost:
            print(f"icelab: {workers.said(where, workers_lost)}", file=sys.stderr)
        if lost:
            print(f"icelab: {watch.outage(where)}", file=sys.stderr)
        if ended is not None:
            print(f"icelab: {where}: {ended}", file=sys.stderr)
            if reopen is None:
                raise UserError(f"{ended}; this experiment cannot open a new session, so the run stops here")
            renew(jvm_gone=True)
        elif reopen is not None and out_of_memory(measured):
            # A JVM that threw OutOfMemoryError may have lost a Spark thread to it too, and its
            # heap was grown and churned by the failed plan: the next cell gets a new JVM, as the
            # run's first did, so no timing inherits that state.
            print(f"icelab: {where}: {measured.error}; a new session follows", file=sys.stderr)
            renew()
        failpoints.point("protocol.measurement")
        if state["stop"]:
            raise KeyboardInterrupt
        return stored

    with stop_requests() as state:
        with tqdm(
            total=protocol.warmups * len(all_cases), desc="warm-ups", unit="query", disable=not progress
        ) as bar:
            for repetition, _, execute in plan[: protocol.warmups]:
                for case in in_round(all_cases, repetition):
                    one(case, repetition, True, execute and warms_execution(protocol, case))
                    bar.update()
                end_of_round()
        if protocol.steady_k:
            record = steady_state(all_cases, protocol, one, progress)
            end_of_round()
            print(steady_summary(record["cases"], protocol))
            if on_steady:
                on_steady(record)
        measured = plan[protocol.warmups :]
        try:
            with tqdm(
                total=len(measured) * len(all_cases), desc="measurements", unit="query", disable=not progress
            ) as bar:
                for repetition, _, execute in measured:
                    stalled = []
                    for case in in_round(all_cases, repetition):
                        if stalls.reasons(one(case, repetition, False, execute)):
                            stalled.append(case)
                        bar.update()
                    retake_in_round(stalled, repetition, execute, protocol, one)
                    end_of_round()
        except BaseException:
            # Measuring stopped early: the rows it kept still get the rule (no retakes).
            mark_outliers(measured_rows, ruled)
            raise
        mark_outliers(measured_rows, ruled)
        failpoints.point("protocol.retakes")  # marks kept, retakes to come (the kill tests')
        if retake_marked(all_cases, protocol, measured_rows, one):
            end_of_round()
        retaken = sum(1 for r in measured_rows if r.get("retake"))
        print(counts_text(counts(measured_rows), retaken, stalls.outages(measured_rows)))


def retake_in_round(
    stalled: list[Case],
    repetition: int,
    execute: bool,
    protocol: ProtocolConfig,
    one: Callable[..., dict[str, Any]],
) -> None:
    """Measure again, at the end of their own round, the repetitions its clocks marked (`stall`,
    `gc`), up to `protocol.retakes` times while the new row is marked too.

    Why in the round: a retake after every round ran in a warmer session than the rows it stood
    in for, and in two of ten stalled cells it came out faster than a clean run (docs/reliability.md).
    """
    for case in stalled:
        for take in range(1, protocol.retakes + 1):
            if not stalls.reasons(one(case, repetition, False, execute, take)):
                break


def retake_marked(
    all_cases: list[Case],
    protocol: ProtocolConfig,
    measured_rows: list[dict[str, Any]],
    one: Callable[..., dict[str, Any]],
) -> bool:
    """Measure again each marked repetition (its clocks', or the outlier rule's: `mark_outliers`
    ran first) not measured again yet, up to `protocol.retakes` times while the new row is marked
    too: a cell keeps its n without the stalled rows. Whether any row is marked."""
    marked = any(stalls.reasons(r) for r in measured_rows)
    by_name = {(c.query_id, c.variant.label, c.window.name): c for c in all_cases}
    executes = {r: execute for r, warm, execute in rounds(protocol) if not warm}

    def taken(row: dict[str, Any]) -> tuple:
        return (row["query_id"], row["variant"], row["window"], row["repetition"], row.get("retake", 0))

    for take in range(1, protocol.retakes + 1):
        done = {taken(r) for r in measured_rows}
        last = [
            r
            for r in measured_rows
            if r.get("retake", 0) == take - 1 and stalls.reasons(r) and (*taken(r)[:4], take) not in done
        ]
        if not last:
            break
        for row in last:
            case = by_name.get((row["query_id"], row["variant"], row["window"]))
            if case is not None:
                one(case, row["repetition"], False, executes.get(row["repetition"], False), take)
    return marked


OUTLIER_RULE = "outlier"  # the rule `ruled` names


def mark_outliers(
    measured_rows: list[dict[str, Any]], ruled: Callable[[str, list[dict[str, Any]]], None] | None
) -> None:
    """Mark the measured rows that are outliers against the rest of their cell (`stalls.outliers`),
    in place, and tell `ruled` which."""
    found = stalls.outliers(measured_rows)
    for row in found:
        mark(row, ["outlier"])
    if ruled is not None:
        ruled(OUTLIER_RULE, found)


def steady_state(
    all_cases: list[Case],
    protocol: ProtocolConfig,
    one: Callable[[Case, int, bool, bool], dict[str, Any]],
    progress: bool,
) -> dict[str, Any]:
    """Execute each case back to back until its last `steady_k` total times agree, or the cap.

    Returns:
        The settings, the rows it added, and per case: executions needed, settled or not, and
        the spread of its last k ((max - min) / median).
    """
    found = []
    for case in tqdm(all_cases, desc="steady state", unit="case", disable=not progress):
        totals: list[float] = []
        entry: dict[str, Any] = {
            "query_id": case.query_id,
            "variant": case.variant.label,
            "window": case.window.name,
        }
        while len(totals) < protocol.steady_cap and not settled(
            totals, protocol.steady_k, protocol.steady_tolerance
        ):
            row = one(case, -protocol.warmups - 1 - len(totals), True, True)
            if row["status"] != "ok":
                entry["error"] = f"{row['status']}: {str(row.get('error'))[:200]}"
                break
            totals.append(float(row["total_ms"]))
        last = totals[-protocol.steady_k :]
        spread = (max(last) - min(last)) / statistics.median(last) if last else float("nan")
        ok = "error" not in entry and settled(totals, protocol.steady_k, protocol.steady_tolerance)
        found.append(entry | {"warmups": len(totals), "settled": ok, "spread": round(spread, 4)})
    return {
        "k": protocol.steady_k,
        "tolerance": protocol.steady_tolerance,
        "cap": protocol.steady_cap,
        "rows": sum(c["warmups"] + ("error" in c) for c in found),
        "cases": found,
    }
