"""What this machine allows a build: the floor of its work, measured here on the dataset's own rows.

A build generates its rows, writes each format's files and reads every file once to verify it
(`verify.readers_per_day: 2`). Each part has a floor on this machine:

- generation: numpy's time for one batch (a median of a few), times the commits;
- a file's fixed cost: writing (or reading) a one-row file of the schema, as the arrow builder
  writes it (codec, statistics, page index, a dictionary only where parquet-mr keeps one);
- the bytes: writing (or reading) the whole batch as one file, in MB per second.

A file's fixed cost is split once more: its pages (one data page per column of a one-row file,
and each dictionary page) each pass through the codec, and a codec call on a few bytes is
timed. zstd sets up a new context for each page; on a virtual machine that set-up can cost more
than the page itself (docs/dataset.md, "What this machine allows a build"). A file of more rows
adds a dictionary page in more columns; the bound leaves those pages out, so it stays a floor.

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
from icelab.datagen.arrow_ingest import CODECS, Target, by_day, write_file
from icelab.datagen.dataset import Dataset
from icelab.datagen.dictionaries import dictionary_columns

# One-row files written and read to time a file's fixed cost: enough for a stable median.
SMALL_FILES = 25
# Batches generated to time generation.
GENERATIONS = 3
# Codec calls on a page of a few bytes, timed for the codec's fixed cost per page.
CODEC_CALLS = 2000
TINY_PAGE = bytes(range(64))


def _timed(step: Callable[[], Any], times: int) -> float:
    """The median seconds of `step` over `times` calls."""
    seconds = []
    for _ in range(times):
        t0 = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds)


def _written(table: pa.Table, target: Target, compression: str, dictionary: list[str]) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    write_file(sink, table, target, compression, dictionary)
    return sink.getvalue()


def pages(file: pa.Buffer) -> int:
    """The pages of a one-row Parquet file that pass through its codec: each column chunk's
    data page (one row: one page) and its dictionary page, if it has one."""
    meta = pq.ParquetFile(pa.BufferReader(file)).metadata
    groups = [meta.row_group(g) for g in range(meta.num_row_groups)]
    chunks = [group.column(c) for group in groups for c in range(meta.num_columns)]
    return sum(1 + bool(chunk.has_dictionary_page) for chunk in chunks)


def codec_call_us(compression: str) -> tuple[float, float]:
    """Median microseconds of one compress and one decompress call on a page of a few bytes, as
    the arrow builder's codec is set (0 for uncompressed): the codec's fixed cost per page."""
    name, level = CODECS[compression]
    if name == "none":
        return 0.0, 0.0
    codec = pa.Codec(name, level)
    page = pa.py_buffer(TINY_PAGE)
    packed = codec.compress(page)
    return (
        1e6 * _timed(lambda: codec.compress(page), CODEC_CALLS),
        1e6 * _timed(lambda: codec.decompress(packed, len(TINY_PAGE)), CODEC_CALLS),
    )


def floors(dataset: Dataset, spark_schema: Any) -> dict[str, float]:
    """This machine's floors on the dataset's first batch, written to and read from memory."""
    ds = dataset.config
    schema = arrow_schema(spark_schema)
    batch = batch_arrays(ds, 0, schema)
    # A median: one timing can catch a stall of the machine (docs/dataset.md, medium-dict-all).
    generate_s = _timed(lambda: batch_arrays(ds, 0, schema), GENERATIONS)
    batch, _ = by_day(batch)
    target = Target("", "", schema, {}, "date")
    one_row = batch.slice(0, 1)
    # A build decides once per batch which columns keep a dictionary (`dictionaries`): decided
    # here before the timing.
    one_row_dictionary = dictionary_columns(one_row, [0])[0]
    batch_dictionary = dictionary_columns(batch, [0])[0]

    def write_small() -> pa.Buffer:
        return _written(one_row, target, ds.compression, one_row_dictionary)

    def write_whole() -> pa.Buffer:
        return _written(batch, target, ds.compression, batch_dictionary)

    small, whole = write_small(), write_whole()
    compress_us, decompress_us = codec_call_us(ds.compression)
    return {
        "batch_rows": len(batch),
        "generate_batch_s": generate_s,
        "write_file_ms": 1e3 * _timed(write_small, SMALL_FILES),
        "read_file_ms": 1e3 * _timed(lambda: pq.read_table(pa.BufferReader(small)), SMALL_FILES),
        "write_mb_per_s": whole.size / 1e6 / _timed(write_whole, 3),
        "read_mb_per_s": whole.size / 1e6 / _timed(lambda: pq.read_table(pa.BufferReader(whole)), 3),
        "pages_per_file": pages(small),
        "compress_call_us": compress_us,
        "decompress_call_us": decompress_us,
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
