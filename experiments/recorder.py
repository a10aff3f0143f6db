"""Keeps a run's measurements safe as they arrive.

Each row is appended (and flushed) to `measurements.partial.jsonl` the moment it is measured,
and `measurements.parquet` is rewritten atomically at the end of every round and when the run
ends, however it ends. An interrupted run therefore keeps every finished round in the contract's
format, and every measured row in the JSON lines file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from experiments.protocol import Case, run_rounds
from icelab.config import ProtocolConfig
from icelab.contract import MEASUREMENTS, to_table
from icelab.results import write_json

PARTIAL = "measurements.partial.jsonl"


class Recorder:
    """Rows of one run, written as they come."""

    def __init__(self, run_dir: Path, run_info: dict[str, Any]) -> None:
        self.run_dir = run_dir
        self.rows: list[dict[str, Any]] = []
        self.info = {**run_info, "status": "running", "started_utc": _now()}
        self._partial = (run_dir / PARTIAL).open("a")
        write_json(run_dir / "run.json", self.info)

    def add(self, row: dict[str, Any]) -> None:
        """Keep one measurement row (on disk at once)."""
        self.rows.append(row)
        self._partial.write(json.dumps(row, default=str) + "\n")
        self._partial.flush()

    def flush(self) -> None:
        """Rewrite measurements.parquet with every row so far (atomically)."""
        tmp = self.run_dir / f".{MEASUREMENTS}.tmp"
        pq.write_table(to_table(self.rows), tmp)
        os.replace(tmp, self.run_dir / MEASUREMENTS)

    def record(
        self,
        spark: SparkSession,
        all_cases: list[Case],
        protocol: ProtocolConfig,
        base: dict[str, Any],
        progress: bool = True,
    ) -> None:
        """Measure every case for the protocol's rounds, keeping each row with the run's `base`.

        An interrupted run is closed as such with every row so far and exits with status 130;
        any other failure closes it as failed and propagates.
        """
        try:
            run_rounds(spark, all_cases, protocol, lambda row: self.add(base | row), self.flush, progress)
        except KeyboardInterrupt:
            self.close("interrupted")
            kept = f"kept {len(self.rows)} measurements in {self.run_dir}"
            print(f"icelab: interrupted: {kept}", file=sys.stderr)
            raise SystemExit(130) from None
        except BaseException as exc:
            self.close("failed", error=repr(exc)[:500])
            raise

    def close(self, status: str, **extra: Any) -> None:
        """Final flush and run.json with how the run ended (complete, interrupted, failed)."""
        self.flush()
        self._partial.close()
        if status == "complete":
            (self.run_dir / PARTIAL).unlink(missing_ok=True)
        self.info.update(status=status, rows=len(self.rows), finished_utc=_now(), **extra)
        write_json(self.run_dir / "run.json", self.info)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
