"""Ingestion without Spark's writers: each batch generated with numpy (`arrow_events`) and written
with pyarrow, one file per day partition in each format, then committed to Iceberg in the driver's
JVM as one append (`BatchAppend.java`: one snapshot, one manifest, Iceberg's own metrics).

Batches are generated and written by worker processes, two at a time on two cores; the driver
commits them in batch order, so the snapshots follow the ingest order as Spark's ingest leaves it.
The files are Parquet as Spark and Iceberg write it where it matters to a read: the dataset's
codec at parquet-mr's level, one row group, dictionary pages where parquet-mr keeps them
(`dictionaries`), statistics and page indexes; field ids and the `iceberg.schema` footer key in
Iceberg's files, Spark's schema footer key in the Parquet table's.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyspark
from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.core import failpoints, javac, object_store
from icelab.core.config import DatasetConfig
from icelab.core.iceberg import load_table
from icelab.core.object_store import s3
from icelab.datagen.arrow_events import arrow_schema, batch_arrays
from icelab.datagen.dataset import Dataset
from icelab.datagen.dictionaries import dictionary_columns
from icelab.datagen.generate import generate_rows
from icelab.datagen.ingest import IngestTimes, create_iceberg_table

SOURCE = Path(__file__).with_name("BatchAppend.java")
# `dataset.compression` (Spark's codec names) -> pyarrow's codec and level. The levels are
# parquet-mr's defaults, which Spark's and Iceberg's writers use (zstd 3; gzip through zlib's, 6).
CODECS: dict[str, tuple[str, int | None]] = {
    "zstd": ("zstd", 3),
    "gzip": ("gzip", 6),
    "snappy": ("snappy", None),
    "uncompressed": ("none", None),
}
FIELD_ID = b"PARQUET:field_id"
# Up to this many rows the driver writes the batches itself: two worker processes' start (about
# 3 s of imports each) would cost more than they save.
IN_PROCESS_ROWS = 200_000


@dataclass
class Target:
    """Where and how a worker writes one format's files."""

    root: str  # the table's root (Parquet) or data directory (Iceberg): a local path, or /bucket/key
    uri: str  # the same as the table's metadata names it (`file:/...`, `s3a://bucket/...`)
    schema: pa.Schema
    metadata: dict[bytes, bytes]
    partition_key: str  # `date` (Hive directory) or Iceberg's partition field name


@dataclass
class Job:
    """What a worker needs, picklable."""

    ds: DatasetConfig
    schema: pa.Schema
    parquet: Target
    iceberg: Target
    store: s3.Endpoint | None  # where the files go when the tables live on an object store
    footers: str | None = None  # a local directory for the footers of the store's files


@dataclass
class Written:
    """One batch's files and seconds, as a worker returns them."""

    batch: int
    rows: int
    iceberg_lines: list[str] = field(default_factory=list)
    # generate_s: the rows and their layout (by day, each format's types, the dictionaries);
    # parquet_s, iceberg_write_s: each format's files written.
    seconds: dict[str, float] = field(default_factory=dict)


# How many times a file's PUT is sent again when the store says "try again": S3A's retry limit
# (fs.s3a.retry.limit, which icelab sets for Spark's writes).
PUT_RETRIES = 3
# Connections a worker sends its PUTs on (Sink).
PUT_THREADS = 4
PARQUET_MAGIC = b"PAR1"


def _fs_path(uri: str) -> str:
    """The path of a `file:` or `s3a:` URI: a local path, or /bucket/key on the store."""
    parsed = urlparse(uri)
    return parsed.path if parsed.scheme == "file" else f"/{parsed.netloc}{parsed.path}"


class Sink:
    """Where a worker's files go: local disk, or the object store, one signed PUT per file.

    pyarrow's own S3 file system sends its uploads in parts, which Ceph's RGW refuses
    (MissingContentLength), so a file is written to memory and sent whole, as a metadata state
    is staged (`icelab.datagen.metadata.staging`). The PUTs go out on `PUT_THREADS` connections
    while the worker encodes the next files: a PUT mostly waits for the store, and RGW answers
    more PUTs a second on more connections.
    """

    def __init__(self, store: s3.Endpoint | None) -> None:
        self.store = store
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(PUT_THREADS) if store is not None else None
        self._sent: list[Future[int]] = []

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def mkdir(self, path: str) -> None:
        # An object store has no directories: a marker object there would be one Spark never wrote.
        if self.store is None:
            Path(path).mkdir(parents=True, exist_ok=True)

    def write(
        self,
        path: str,
        table: pa.Table,
        target: Target,
        compression: str,
        dictionary: list[str] | None = None,
    ) -> bytes | None:
        """Write one file (on the store: encode it and send it in the background); on the
        store, return its bytes (None on local disk). `wait` says when the store has them all."""
        if self.store is None:
            write_file(path, table, target, compression, dictionary)
            return None
        buffer = pa.BufferOutputStream()
        write_file(buffer, table, target, compression, dictionary)
        data = buffer.getvalue().to_pybytes()
        assert self._pool is not None
        self._sent.append(self._pool.submit(self._put, path, data))
        return data

    def _put(self, path: str, data: bytes) -> int:
        assert self.store is not None
        conn = getattr(self._local, "conn", None) or s3.connect(self.store)
        self._local.conn = conn
        return s3.put_object(conn, self.store, path, data, retries=PUT_RETRIES)

    def wait(self) -> None:
        """Return when every file sent so far is on the store; raise the first PUT's error."""
        sent, self._sent = self._sent, []
        for put in sent:
            put.result()


def footer_copy(data: bytes, path: Path) -> None:
    """Save a Parquet file's footer as a file a Parquet reader opens: magic, footer, length, magic.

    The commit reads each file's metrics from its footer; from this copy it sends no request to
    the store. The footer's offsets still point into the real file, which the reader never reads.
    """
    length = int.from_bytes(data[-8:-4], "little")
    path.write_bytes(PARQUET_MAGIC + data[-(length + 8) :])


def by_day(table: pa.Table) -> tuple[pa.Table, list[tuple[Any, int, int]]]:
    """The rows ordered by day (id order kept within a day: a stable sort), and each day's
    (day, first row, row count)."""
    days = table.column("date").combine_chunks()
    order = pc.sort_indices(days)
    table = table.take(order)
    values = days.take(order).to_numpy(zero_copy_only=False)
    cuts = np.flatnonzero(values[1:] != values[:-1]) + 1
    return table, [
        (values[lo], int(lo), int(hi - lo))
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(values)], strict=True)
    ]


def write_file(
    where: str | pa.NativeFile,
    table: pa.Table,
    target: Target,
    compression: str,
    dictionary: list[str] | None = None,
) -> None:
    """Write `table` as one file, one row group. `dictionary`: the columns written with a
    dictionary, as parquet-mr would choose them (`dictionaries`); None: chosen on `table` here."""
    name, level = CODECS[compression]
    if dictionary is None:
        dictionary = dictionary_columns(table, [0])[0]
    with pq.ParquetWriter(
        where,
        target.schema.with_metadata(target.metadata),
        compression=name,
        compression_level=level,
        use_dictionary=dictionary,
        write_statistics=True,
        write_page_index=True,
        store_schema=False,
    ) as writer:
        writer.write_table(table, row_group_size=max(len(table), 1))


def write_batch(job: Job, batch: int) -> Written:
    """Generate one batch and write its files in both formats (a worker's task)."""
    with Sink(job.store) as sink:
        return _write_batch(job, batch, sink)


def _write_batch(job: Job, batch: int, sink: Sink) -> Written:
    t0 = time.perf_counter()
    table = batch_arrays(job.ds, batch, job.schema)
    written = Written(batch, len(table))
    run = uuid.uuid4()
    table, days = by_day(table)
    # Cast once per batch: each file is then a slice of each format's table.
    for_parquet = table.drop_columns(["date"]).cast(job.parquet.schema)
    for_iceberg = table.cast(job.iceberg.schema)
    # Both formats' files hold the same rows, so parquet-mr's choice is the same in both (the
    # Parquet table's files have no `date` column).
    dictionaries = dictionary_columns(for_iceberg, [lo for _, lo, _ in days])
    t1 = time.perf_counter()
    parquet_s = iceberg_s = 0.0
    for n, (day, lo, count) in enumerate(days):
        label = str(day)  # numpy datetime64[D]: YYYY-MM-DD
        a = time.perf_counter()
        pq_dir = f"{job.parquet.root}/{job.parquet.partition_key}={label}"
        sink.mkdir(pq_dir)
        name = f"part-{n:05d}-{run}.c000.{job.ds.compression}.parquet"
        dictionary = dictionaries[n]
        sink.write(
            f"{pq_dir}/{name}",
            for_parquet.slice(lo, count),
            job.parquet,
            job.ds.compression,
            [c for c in dictionary if c != "date"],
        )
        b = time.perf_counter()
        partition = f"{job.iceberg.partition_key}={label}"
        ice_dir = f"{job.iceberg.root}/{partition}"
        sink.mkdir(ice_dir)
        name = f"{n:05d}-{batch}-{run}-0-00001.parquet"
        data = sink.write(
            f"{ice_dir}/{name}", for_iceberg.slice(lo, count), job.iceberg, job.ds.compression, dictionary
        )
        line = f"{job.iceberg.uri}/{partition}/{name}\t{partition}"
        if data is not None and job.footers is not None:
            footer = Path(job.footers) / f"{name}.footer"
            footer_copy(data, footer)
            line += f"\t{footer}\t{len(data)}"
        written.iceberg_lines.append(line)
        parquet_s += b - a
        iceberg_s += time.perf_counter() - b
    # The files' last PUTs: the batch is committed only once the store holds all of them. The
    # wait is both formats' and is split as the time spent on each was.
    c = time.perf_counter()
    sink.wait()
    waited = time.perf_counter() - c
    share = parquet_s / (parquet_s + iceberg_s) if parquet_s + iceberg_s else 0.5
    written.seconds = {
        "generate_s": t1 - t0,
        "parquet_s": parquet_s + waited * share,
        "iceberg_write_s": iceberg_s + waited * (1 - share),
    }
    return written


def _with_ids(f: pa.Field, spec: dict[str, Any], required: bool, fid: int | None) -> pa.Field:
    """`f` with Iceberg's field ids and nullability (`spec`: the field's Iceberg type)."""
    t = f.type
    if pa.types.is_struct(t):
        by_name = {c["name"]: c for c in spec["fields"]}
        t = pa.struct(
            [
                _with_ids(c, by_name[c.name]["type"], by_name[c.name]["required"], by_name[c.name]["id"])
                for c in t
            ]
        )
    elif pa.types.is_list(t):
        element = _with_ids(t.value_field, spec["element"], spec["element-required"], spec["element-id"])
        t = pa.list_(element)
    elif pa.types.is_map(t):
        key = _with_ids(t.key_field, spec["key"], True, spec["key-id"])
        item = _with_ids(t.item_field, spec["value"], spec["value-required"], spec["value-id"])
        t = pa.map_(key, item)
    out = pa.field(f.name, t, not required)
    return out.with_metadata({FIELD_ID: str(fid).encode()}) if fid is not None else out


def iceberg_schema(schema: pa.Schema, iceberg_json: str) -> pa.Schema:
    """`schema` as Iceberg's files carry it: field ids, and Iceberg's required flags."""
    fields = {f["name"]: f for f in json.loads(iceberg_json)["fields"]}
    return pa.schema(
        [
            _with_ids(f, fields[f.name]["type"], fields[f.name]["required"], fields[f.name]["id"])
            for f in schema
        ]
    )


def _store_endpoint() -> s3.Endpoint | None:
    """Where the workers send the files: Spark's endpoint (the delay proxy, when there is one), so
    that the build pays the store's latency and meets its faults as Spark's build does."""
    store = object_store.active()
    if store is None:
        return None
    ep = store.server
    return s3.Endpoint(store.spark_endpoint, ep.access_key, ep.secret_key, store.config.region)


def appender(spark: SparkSession, jtable: Any, jar_name: str) -> Callable[[list[str], str], None]:
    """`BatchAppend.append` on this table, loaded beside the table's Iceberg classes."""
    method = javac.compiled_method(
        spark.sparkContext._gateway,
        [SOURCE],
        "Iceberg batch appender",
        jar_name,
        jtable,
        "append",
        "org.apache.iceberg.Table",
        "org.apache.hadoop.conf.Configuration",
        "java.lang.String",
        "java.lang.String",
    )
    conf = spark._jsc.hadoopConfiguration()

    def append(lines: list[str], summary: str) -> None:
        method(jtable, conf, "\n".join(lines), summary)

    return append


def ingest_arrow(
    spark: SparkSession, dataset: Dataset, jar_name: str, workers: int = 2, progress: bool = True
) -> IngestTimes:
    """Write every batch to both tables with numpy and pyarrow; the Iceberg table must not exist yet."""
    ds = dataset.config
    spark_schema = generate_rows(spark, ds, 0, 0, 1).schema  # the rows' shape, analysed, not run
    schema = arrow_schema(spark_schema)
    create_iceberg_table(spark, dataset, spark_schema)
    jtable = load_table(spark, dataset.iceberg_table)
    jvm = spark._jvm
    ice_json = str(jvm.org.apache.iceberg.SchemaParser.toJson(jtable.schema()))
    partition_field = str(jtable.spec().fields().get(0).name())
    pq_fields = [f for f in spark_schema.fields if f.name != "date"]
    spark_json = json.dumps({"type": "struct", "fields": [json.loads(f.json()) for f in pq_fields]})
    job = Job(
        ds=ds,
        schema=schema,
        parquet=Target(
            root=_fs_path(dataset.parquet_uri),
            uri=dataset.parquet_uri,
            schema=pa.schema([f for f in schema if f.name != "date"]),
            metadata={
                b"org.apache.spark.sql.parquet.row.metadata": spark_json.encode(),
                b"org.apache.spark.version": pyspark.__version__.encode(),
            },
            partition_key="date",
        ),
        iceberg=Target(
            root=_fs_path(str(jtable.location())) + "/data",
            uri=str(jtable.location()) + "/data",
            schema=iceberg_schema(schema, ice_json),
            metadata={b"iceberg.schema": ice_json.encode()},
            partition_key=partition_field,
        ),
        store=_store_endpoint(),
    )
    append = appender(spark, jtable, jar_name)
    summary = f"spark.app.id={spark.sparkContext.applicationId}"
    times = IngestTimes(workers=workers)
    started = time.perf_counter()
    bar = tqdm(total=ds.commits, desc=f"ingest {ds.name}", unit="commit", disable=not progress)
    context = multiprocessing.get_context("spawn")  # the driver holds a JVM gateway: never fork it
    if ds.total_rows <= IN_PROCESS_ROWS:
        workers = times.workers = 1
    with contextlib.ExitStack() as stack:
        if job.store is not None:
            job.footers = stack.enter_context(tempfile.TemporaryDirectory(prefix="icelab-footers-"))
        if workers > 1:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers, mp_context=context))
            batches = pool.map(write_batch, [job] * ds.commits, range(ds.commits))
        else:
            batches = (write_batch(job, b) for b in range(ds.commits))
        for done in batches:
            failpoints.point("ingest.iceberg_append")
            t0 = time.perf_counter()
            append(done.iceberg_lines, summary)
            commit_s = time.perf_counter() - t0
            for line in done.iceberg_lines:
                if line.count("\t") == 3:
                    Path(line.split("\t")[2]).unlink()
            step = {
                "generate_s": done.seconds["generate_s"],
                "parquet_s": done.seconds["parquet_s"],
                "iceberg_s": done.seconds["iceberg_write_s"] + commit_s,
            }
            times.per_batch.append({"batch": done.batch, "rows": done.rows, **step, "commit_s": commit_s})
            times.generate_s += step["generate_s"]
            times.parquet_s += step["parquet_s"]
            times.iceberg_s += step["iceberg_s"]
            times.commit_s += commit_s
            times.rows += done.rows
            bar.update()
            bar.set_postfix(rows=times.rows, refresh=False)
    bar.close()
    times.wall_s = time.perf_counter() - started
    return times
