"""Keeps a run's measurements safe as they arrive.

Each row is appended (and flushed) to `measurements.partial.jsonl` the moment it is measured,
and `measurements.parquet` is rewritten atomically at the end of every round and when measuring
stops, however it stops. An interrupted run therefore keeps every finished round in the
contract's format, and every measured row in the JSON lines file; `recover` turns those lines
into measurements.parquet for a run whose process was killed. How the run ended is
`icelab.core.run_state`'s business.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from icelab.bench import stalls
from icelab.bench.protocol import OUTLIER_RULE, Case, mark_outliers, run_rounds
from icelab.core import failpoints, run_state
from icelab.core.config import ProtocolConfig
from icelab.core.contract import MEASUREMENTS, to_table
from icelab.core.results import atomic_path

PARTIAL = "measurements.partial.jsonl"
# A line of PARTIAL that is not a row: a rule that ran after the rows, and the rows it marked.
RULE = "_rule"
KEY = ("dataset", "query_id", "variant", "window", "repetition", "retake")  # a row, once per run


def _key(row: dict[str, Any]) -> list[Any]:
    return [row.get(k, 0 if k == "retake" else None) for k in KEY]


def _write_measurements(run_dir: Path, rows: list[dict[str, Any]]) -> None:
    with atomic_path(run_dir / MEASUREMENTS) as tmp:
        pq.write_table(to_table(rows), tmp)
        failpoints.point("recorder.write")  # written, not yet in place: readers see the previous file


class Recorder:
    """Rows of one run, written as they come."""

    def __init__(self, run_dir: Path, run_info: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.rows: list[dict[str, Any]] = []
        self.info = dict(run_info)
        self._partial = (run_dir / PARTIAL).open("a")
        run_state.update(run_dir, **self.info)

    def add(self, row: dict[str, Any]) -> dict[str, Any]:
        """Keep one measurement row (on disk at once); the row as kept."""
        self.rows.append(row)
        self._partial.write(json.dumps(row, default=str) + "\n")
        self._partial.flush()
        return row

    def ruled(self, rule: str, marked: list[dict[str, Any]]) -> None:
        """The protocol ran `rule` (`protocol.mark_outliers`): the rows it marked, by key, go to the
        JSON lines file at once, so a run killed during its retakes recovers them marked."""
        line = {RULE: rule, "marked": [_key(row) for row in marked]}
        self._partial.write(json.dumps(line, default=str) + "\n")
        self._partial.flush()

    def flush(self) -> None:
        """Rewrite measurements.parquet with every row so far (atomically); count them, and the
        retakes among them, in run.json."""
        _write_measurements(self.run_dir, self.rows)
        retakes = sum(1 for row in self.rows if row.get("retake"))
        run_state.update(self.run_dir, rows=len(self.rows), retakes=retakes)

    def record(
        self,
        spark: SparkSession,
        all_cases: list[Case],
        protocol: ProtocolConfig,
        base: dict[str, Any],
        progress: bool = True,
        data_uri: str | None = None,
        reopen: Callable[[], SparkSession] | None = None,
        fresh_jvm: bool = False,
    ) -> None:
        """Measure every case for the protocol's rounds, keeping each row with the run's `base`.

        Every row measured is on disk when this returns or raises (Ctrl-C included). With the
        dataset's `data_uri` on S3A, each row also counts the requests its measurement sent.
        `reopen`: a new session after a measurement ended the driver JVM (`run_rounds`);
        `fresh_jvm`: a new one before every measurement.
        """
        try:
            run_rounds(
                spark,
                all_cases,
                protocol,
                lambda row: self.add(base | row),
                self.flush,
                progress,
                data_uri,
                on_steady=self.steady,
                reopen=reopen,
                fresh_jvm=fresh_jvm,
                ruled=self.ruled,
            )
        finally:
            self.flush()

    def steady(self, record: dict[str, Any]) -> None:
        """The steady-state phase is over: its record goes to run.json (`steady_state`) at once,
        so a run stopped later still says how many rows it added."""
        self.info["steady_state"] = record
        run_state.update(self.run_dir, steady_state=record)

    def close(self, **extra: Any) -> None:
        """Measuring is over: final flush, the JSON lines file goes, run.json gets `extra` and
        the count of rows marked `faulted` (said on the console when there are any)."""
        self.flush()
        self._partial.close()
        (self.run_dir / PARTIAL).unlink(missing_ok=True)
        faulted = sum(1 for row in self.rows if row.get("faulted"))
        if faulted:
            print(
                f"faulted: {faulted} of {len(self.rows)} measurements met a store fault, an S3 retry or "
                "a stall their own clocks showed (marked; left out of medians unless "
                "protocol.keep_faulted=true)"
            )
        run_state.update(self.run_dir, **self.info, rows=len(self.rows), faulted_rows=faulted, **extra)


def recover(run_dir: Path) -> int:
    """Rebuild measurements.parquet from the JSON lines of a run whose process died.

    A line cut short by the kill is dropped. The marks a rule made after the rows (`ruled`) are
    put back on them; a rule that had not run yet (the kill came during the measured rounds) is
    run now over the rows kept, as the protocol would have run it when measuring stopped.
    Returns the rows recovered (0: nothing to do).
    """
    partial = run_dir / PARTIAL
    if not partial.is_file():
        return 0
    rows, rules = [], []
    for line in partial.read_text().splitlines():
        try:
            found = json.loads(line)
        except ValueError:
            continue
        (rules if RULE in found else rows).append(found)
    by_key = {tuple(_key(row)): row for row in rows}  # both sides read back from JSON
    for rule in rules:
        for key in rule["marked"]:
            row = by_key.get(tuple(key))
            if row is not None and rule[RULE] not in stalls.reasons(row):
                stalls.mark(row, [rule[RULE]])
    if OUTLIER_RULE not in {rule[RULE] for rule in rules}:
        mark_outliers(rows, None)  # the rule itself leaves warm-ups out
    for leftover in run_dir.glob(f".{MEASUREMENTS}.tmp-*"):  # a write the kill cut short
        leftover.unlink()
    _write_measurements(run_dir, rows)
    run_state.update(run_dir, rows=len(rows), retakes=sum(1 for row in rows if row.get("retake")))
    return len(rows)
