"""What this machine allows a build: the floor of its work, measured here on the dataset's own rows.

A build generates its rows, writes each format's files and reads every file once to verify it
(`verify.readers_per_day: 2`). Each part has a floor on this machine:

- generation: numpy's time for one batch, times the commits;
- a file's fixed cost: writing (or reading) a one-row file of the schema, as the arrow builder
  writes it (codec, dictionary, statistics, page index);
- the bytes: writing (or reading) the whole batch as one file, in MB per second.

The bound is their sum over the build's files and bytes, divided by the cores. It leaves out
what is not the hardware's: Iceberg's commits, Spark's and DuckDB's own overheads, the checksum.
The build's wall time over the bound says how far a build is from what the machine allows.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icelab.datagen.arrow_events import arrow_schema, batch_arrays
from icelab.datagen.arrow_ingest import Target, by_day, write_file
from icelab.datagen.dataset import Dataset

# One-row files written and read to time a file's fixed cost: enough for a stable median.
SMALL_FILES = 25


def _timed(step: Callable[[], Any], times: int) -> float:
    """The median seconds of `step` over `times` calls."""
    seconds = []
    for _ in range(times):
        t0 = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def _written(table: pa.Table, target: Target, compression: str) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    write_file(sink, table, target, compression)
    return sink.getvalue()


def floors(dataset: Dataset, spark_schema: Any) -> dict[str, float]:
    """This machine's floors on the dataset's first batch, written to and read from memory."""
    ds = dataset.config
    schema = arrow_schema(spark_schema)
    t0 = time.perf_counter()
    batch = batch_arrays(ds, 0, schema)
    generate_s = time.perf_counter() - t0
    batch, _ = by_day(batch)
    target = Target("", "", schema, {}, "date")
    one_row = batch.slice(0, 1)
    whole = _written(batch, target, ds.compression)
    small = _written(one_row, target, ds.compression)
    return {
        "batch_rows": len(batch),
        "generate_batch_s": generate_s,
        "write_file_ms": 1e3 * _timed(lambda: _written(one_row, target, ds.compression), SMALL_FILES),
        "read_file_ms": 1e3 * _timed(lambda: pq.read_table(pa.BufferReader(small)), SMALL_FILES),
        "write_mb_per_s": whole.size / 1e6 / _timed(lambda: _written(batch, target, ds.compression), 3),
        "read_mb_per_s": whole.size / 1e6 / _timed(lambda: pq.read_table(pa.BufferReader(whole)), 3),
    }


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def bound(dataset: Dataset, spark_schema: Any, info: dict[str, Any]) -> dict[str, Any]:
    """The build's floor on this machine and its parts (the console sets the build's wall time
    against it: `icelab.experiments.datagen.bound_line`).

    Args:
        info: the dataset's completion mark (`icelab.datagen.build`): its files and bytes.
    """
    f = floors(dataset, spark_schema)
    summary, n = info["summary"], cores()
    files = summary["parquet"]["files"] + summary["iceberg"]["files"]
    mb = (summary["parquet"]["bytes"] + summary["iceberg"]["bytes"]) / 1e6
    parts = {
        "generate_s": f["generate_batch_s"] * dataset.config.commits,
        "write_s": files * f["write_file_ms"] / 1e3 + mb / f["write_mb_per_s"],
        "read_s": files * f["read_file_ms"] / 1e3 + mb / f["read_mb_per_s"],
    }
    return {
        "floors": f,
        "cores": n,
        "files": files,
        "mb": mb,
        "parts_s": parts,
        "bound_s": sum(parts.values()) / n,
    }
