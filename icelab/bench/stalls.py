"""Stalls nobody injected: a row whose wall time its own work does not explain is marked.

Each measurement records what it can about its own health (`jvm_clock.JvmClock`, and on S3A the store's
request durations, `storage.RequestCounts`): the JVM's garbage-collection time over the
measurement (`gc_ms`), the time S3A's requests took (`s3_request_ms`, summed) and the longest
one when it set a new longest for the session (`s3_longest_ms`). Iceberg's own planning clock is
already in the row (`iceberg_planning_ms`). The rules, also in docs/protocol.md:

- `stall=<s>`: the planning's wall time exceeds Iceberg's own planning clock by `STALL_MS` or
  more (the process stood still while Iceberg did not count); or a store request took
  `STALL_MS` or more (S3A's longest, or the mean of the measurement's requests, or the delay
  proxy's longest when it is in the path); or the driver JVM or this Python process stood still
  `STALL_MS` or more (`pause_ms`: a sleeper thread in each that oversleeps, Hadoop's
  JvmPauseMonitor in the JVM); or a task stood off the CPU `STALL_MS` or more beyond the rest of
  its stage (`task_stall_ms`: a stopped executor, `icelab/bench/task_clock.py`).
- `gc=<s>`: the JVM collected garbage for `GC_MS` or more, and for at least `GC_SHARE` of the
  measurement's wall time.
- `outlier`: against the rest of its cell (same dataset, query, variant and window, measured
  rounds, ok and unmarked), a planning or execution time at least `OUTLIER_RATIO` times the
  median of the others and `OUTLIER_MS` above it, with at least `OUTLIER_OTHERS` other.

A marked row is left out of the medians like any faulted row, and the protocol measures that
repetition again once (`retake` 1), so that the cell keeps its n.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

STALL_MS = 2000.0  # unexplained wall time, or one store request, that marks a stall
GC_MS = 1000.0  # garbage collection that marks a row, when it is also ...
GC_SHARE = 0.5  # ... at least this share of the measurement's wall time
OUTLIER_RATIO = 3.0  # a time this many times the median of the rest of its cell ...
OUTLIER_MS = 1000.0  # ... and this far above it is an outlier
OUTLIER_OTHERS = 1  # rows of the cell besides it, at least (the smoke run measures two rounds)
REASONS = ("stall", "gc", "outlier")
CELL = ("dataset", "query_id", "variant", "window")


def row_marks(row: dict[str, Any]) -> list[str]:
    """The marks a row earns from its own clocks (`stall=<s>`, `gc=<s>`); empty for a clean one."""
    marks = []
    stalled = []
    wall, inner = row.get("planning_ms"), row.get("iceberg_planning_ms")
    if wall is not None and inner is not None and wall - inner >= STALL_MS:
        stalled.append(wall - inner)
    longest = row.get("s3_longest_ms")
    if longest is not None and longest >= STALL_MS:
        stalled.append(longest)
    spent, sent = row.get("s3_request_ms"), row.get("s3_requests")
    if spent and sent and spent / sent >= STALL_MS:
        stalled.append(spent / sent)
    for clock in ("proxy_longest_ms", "pause_ms", "task_stall_ms"):
        held = row.get(clock)
        if held is not None and held >= STALL_MS:
            stalled.append(held)
    if stalled:
        marks.append(f"stall={max(stalled) / 1000:.1f}")
    gc = row.get("gc_ms")
    total = row.get("total_ms") or row.get("planning_ms")
    if gc is not None and total and gc >= GC_MS and gc >= GC_SHARE * total:
        marks.append(f"gc={gc / 1000:.1f}")
    return marks


def outliers(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that are outliers against the rest of their cell (measured, ok, unmarked rows)."""
    cells: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if not row.get("warmup") and row.get("status") == "ok" and not row.get("faulted"):
            cells[tuple(row.get(k) for k in CELL)].append(row)
    found: dict[int, dict[str, Any]] = {}  # by identity: two rows may hold equal values
    for members in cells.values():
        for metric in ("planning_ms", "execution_ms"):
            timed = [r for r in members if r.get(metric) is not None]
            for row in timed:
                others = [r[metric] for r in timed if r is not row]
                if len(others) < OUTLIER_OTHERS:
                    continue
                middle = statistics.median(others)
                x = row[metric]
                if x >= OUTLIER_RATIO * middle and x - middle >= OUTLIER_MS:
                    found.setdefault(id(row), row)
    return list(found.values())


def mark(row: dict[str, Any], marks: list[str]) -> dict[str, Any]:
    """`row` with `marks` added to its faults, and faulted (in place; returned)."""
    if marks:
        row["faults"] = ",".join([*([row["faults"]] if row.get("faults") else []), *marks])
        row["faulted"] = True
    return row


# A clock's mark gives seconds with one decimal (`stall=20.5`); the delay proxy's tally, which
# also names a `stall`, counts requests (`stall=2`, icelab/core/object_store/proxy.py).
_MARK = re.compile(r"(stall|gc)=\d+\.\d|outlier")


def reasons(row: dict[str, Any]) -> list[str]:
    """Which of `REASONS` a row was marked for (by its clocks, not by the proxy's tally)."""
    found = {
        m.group(1) or m.group(0) for m in map(_MARK.fullmatch, str(row.get("faults") or "").split(",")) if m
    }
    return [r for r in REASONS if r in found]


def counts(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Rows marked per reason (a row marked for two counts under both)."""
    found = dict.fromkeys(REASONS, 0)
    for row in rows:
        for r in reasons(row):
            found[r] += 1
    return found


def outages(rows: Iterable[dict[str, Any]]) -> int:
    """Rows whose measurement failed because the store stopped answering (`faults=outage`)."""
    return sum(1 for row in rows if "outage" in str(row.get("faults") or "").split(","))


def counts_text(found: dict[str, int], retaken: int | None = None, lost: int = 0) -> str:
    """`marked: 1 stall, 0 gc, 0 outlier (left out of medians); 1 measured again`, and with
    `lost` rows of a store outage, `; 1 failed in a store outage (marked)`."""
    text = "marked: " + ", ".join(f"{n} {r}" for r, n in found.items())
    if any(found.values()):
        text += " (left out of medians)"
    if retaken is not None:
        text += f"; {retaken} measured again"
    if lost:
        text += f"; {lost} failed in a store outage (marked)"
    return text
