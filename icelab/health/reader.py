"""Read a table's metadata at one snapshot through Spark's Iceberg metadata tables: no data file is read.

Every figure comes from one snapshot, pinned when the read begins (the current one, or one
given): `manifests` and `entries` are read at its id, and the snapshots, refs and metadata log
as they stood when it was committed, so that a writer committing meanwhile changes nothing read.

What is read, and how often: `manifests` (one row per manifest of the pinned snapshot, with
its partition bounds), `entries` once (every entry of those manifests, aggregated in Spark to
one row per partition; `input_file_name()` names each entry's manifest), `snapshots` and
`metadata_log_entries`, and the sizes of the current metadata.json and manifest list. The
specs and properties come from the loaded `org.apache.iceberg.Table`.

Why this reader: measured against the others in docs/doctor.md (the entries aggregation runs
as a Spark job over the manifests, so it spreads across cores; DuckDB's `iceberg_metadata`
gives no partition values).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from icelab.core import failpoints
from icelab.core.errors import UserError
from icelab.core.storage import Storage
from icelab.health.broken import BrokenTable, first_missing, guard
from icelab.health.entry_counts import COLUMNS as PARTITION_COLUMNS
from icelab.health.entry_counts import SUMS, read_partitions_jvm
from icelab.health.source import Source, metadata_table
from icelab.health.spec import Field, Spec

READER = "spark-metadata-tables"
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2
PUFFIN = "PUFFIN"  # a position delete in this format is a deletion vector (format v3)
LISTING_COLUMNS = ["name", "path", "size", "modified_ms"]


@dataclass
class Metadata:
    """A table's current metadata, as read (no judgement yet).

    Attributes:
        manifests: one row per manifest of the current snapshot: path, length, content (0 data,
            1 deletes), spec_id, entries (live), deleted_entries, added_snapshot_id, and per
            partition field its bounds in internal form: `bounds` (a tuple of (lower, upper,
            contains_null) per field).
        partitions: one row per partition holding a live file: spec_id, key (internal values),
            label, exact (data manifests holding its live data entries), files, bytes, records,
            small_files, delete_files (position_delete_files, deletion_vectors and
            equality_delete_files), delete_records, delete_bytes.
        snapshots: snapshot_id, committed_us, operation, manifest_list.
        refs: branch and tag names -> the snapshot each points at (expiry keeps those).
        listing: the files of the metadata directory: name, path, size, modified_ms.
        all_manifests: names of the manifests any snapshot in the metadata references.
        manifest_lists: names of the manifest lists of every snapshot in the metadata as read,
            the ones committed after the pinned snapshot too (nothing they reference is orphaned).
        timings: seconds per read step.
    """

    specs: dict[int, Spec]
    default_spec_id: int
    properties: dict[str, str]
    format_version: int | None
    location: str
    current_snapshot_id: int | None  # the pinned snapshot: every figure is read at it
    metadata_file: str | None
    metadata_files: int
    manifests: pd.DataFrame
    partitions: pd.DataFrame
    snapshots: pd.DataFrame
    refs: dict[str, int] = field(default_factory=dict)
    listing: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=LISTING_COLUMNS))
    all_manifests: set[str] = field(default_factory=set)
    manifest_lists: set[str] = field(default_factory=set)
    sizes: dict[str, int | None] = field(default_factory=dict)
    small_file_bytes: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    # How `partitions` was summed: "driver-jvm" (entry_counts) or "spark-entries" (read_partitions),
    # and why the driver's JVM was not used, when it was not.
    entries_reader: str = "spark-entries"
    entries_fallback: str | None = None
    # driver-jvm: the manifests read from their Avro bytes and by Iceberg's reader (entry_counts).
    manifests_read: dict[str, int] | None = None

    @property
    def read_seconds(self) -> float:
        return float(sum(self.timings.values()))


def specs_of(jtable: Any) -> tuple[dict[int, Spec], int]:
    """Every partition spec of a loaded Iceberg table, and the default spec's id."""
    schema = jtable.schema()
    found = {}
    jspecs = jtable.specs()
    for sid in list(jspecs.keySet()):
        spec = jspecs.get(sid)
        ptype = spec.partitionType()
        fields = []
        for f in list(spec.fields()):
            result = ptype.field(f.fieldId())
            source = schema.findColumnName(f.sourceId())
            fields.append(
                Field(
                    name=str(f.name()),
                    transform=str(f.transform().toString()),
                    result_type=str(result.type().toString()) if result is not None else "string",
                    source=str(source) if source is not None else None,
                )
            )
        found[int(sid)] = Spec(int(sid), tuple(fields))
    return found, int(jtable.spec().specId())


def _normalized(col: Column, dtype: T.DataType) -> Column:
    """A partition value in Iceberg's internal form: days for dates, microseconds for timestamps."""
    if isinstance(dtype, T.DateType):
        return F.datediff(col, F.lit("1970-01-01").cast("date"))
    if isinstance(dtype, T.TimestampNTZType):
        return F.unix_micros(col.cast("timestamp"))  # the session runs in UTC
    if isinstance(dtype, T.TimestampType):
        return F.unix_micros(col)
    return col


def read_manifests(
    spark: SparkSession, source: Source, specs: dict[int, Spec], snapshot_id: int | None
) -> pd.DataFrame:
    """Every manifest of the snapshot, with its partition bounds in internal form."""
    rows = (
        metadata_table(spark, source, "manifests", snapshot_id)
        .select(
            "content",
            "path",
            "length",
            "partition_spec_id",
            "added_snapshot_id",
            (F.col("added_data_files_count") + F.col("existing_data_files_count")).alias("data_live"),
            F.col("deleted_data_files_count").alias("data_deleted"),
            (F.col("added_delete_files_count") + F.col("existing_delete_files_count")).alias("del_live"),
            F.col("deleted_delete_files_count").alias("del_deleted"),
            "partition_summaries",
        )
        .collect()
    )
    out = []
    for r in rows:
        spec = specs.get(r.partition_spec_id, Spec(r.partition_spec_id, ()))
        summaries = r.partition_summaries or []
        bounds = tuple(
            (f.parse_bound(s.lower_bound), f.parse_bound(s.upper_bound), bool(s.contains_null))
            for f, s in zip(spec.fields, summaries, strict=False)
        )
        data = r.content == DATA
        out.append(
            {
                "path": r.path,
                "length": int(r.length),
                "content": int(r.content),
                "spec_id": int(r.partition_spec_id),
                "added_snapshot_id": r.added_snapshot_id,
                "entries": int((r.data_live if data else r.del_live) or 0),
                "deleted_entries": int((r.data_deleted if data else r.del_deleted) or 0),
                "bounds": bounds,
            }
        )
    columns = ["path", "length", "content", "spec_id", "added_snapshot_id", "entries", "deleted_entries"]
    return pd.DataFrame(out, columns=[*columns, "bounds"])


def read_partitions(
    spark: SparkSession,
    source: Source,
    specs: dict[int, Spec],
    default_spec: int,
    small_file_bytes: int,
    snapshot_id: int | None = None,
) -> pd.DataFrame:
    """One row per partition holding a live data or delete file at the snapshot, aggregated in
    Spark from `entries`."""
    entries = metadata_table(spark, source, "entries", snapshot_id)
    file_type = entries.schema["data_file"].dataType
    names = file_type.fieldNames()
    pfields = file_type["partition"].dataType.fields if "partition" in names else []
    spec_col = F.col("data_file.spec_id") if "spec_id" in names else F.lit(default_spec)
    # A deletion vector's file_size_in_bytes is its whole Puffin file, which holds the vectors
    # of many data files; its own blob's length is content_size_in_bytes (format v3).
    size_col = F.col("data_file.file_size_in_bytes")
    if "content_size_in_bytes" in names:
        size_col = F.coalesce(F.col("data_file.content_size_in_bytes"), size_col)
    pcols = [
        _normalized(F.col("data_file.partition").getField(f.name), f.dataType).alias(f"p{i}")
        for i, f in enumerate(pfields)
    ]
    frame = entries.select(
        F.col("status"),
        F.col("data_file.content").alias("content"),
        spec_col.alias("spec_id"),
        size_col.alias("size"),
        F.upper(F.col("data_file.file_format")).alias("format"),
        F.col("data_file.record_count").alias("records"),
        F.input_file_name().alias("manifest"),
        *pcols,
    )
    live = F.col("status") < 2  # 0 existing, 1 added; 2 deleted in this snapshot
    live_data = live & (F.col("content") == DATA)
    live_deletes = live & (F.col("content") != DATA)
    vector = live & (F.col("content") == POSITION_DELETES) & (F.col("format") == PUFFIN)

    def total(cond: Column, value: Column | int = 1) -> Column:
        return F.sum(F.when(cond, value).otherwise(0))

    keys = ["spec_id", *[f"p{i}" for i in range(len(pcols))]]
    # Two steps, per (partition, manifest) then per partition, rather than one count(DISTINCT):
    # Spark expands every entry row once per distinct aggregate for the latter.
    per_manifest = frame.groupBy(*keys, "manifest").agg(
        total(live_data).alias("files"),
        total(live_data, F.col("size")).alias("bytes"),
        total(live_data, F.col("records")).alias("records"),
        total(live_data & (F.col("size") < small_file_bytes)).alias("small_files"),
        total(live_deletes).alias("delete_files"),
        total(live & (F.col("content") == POSITION_DELETES) & ~vector).alias("position_delete_files"),
        total(vector).alias("deletion_vectors"),
        total(live & (F.col("content") == EQUALITY_DELETES)).alias("equality_delete_files"),
        total(live_deletes, F.col("records")).alias("delete_records"),
        total(live_deletes, F.col("size")).alias("delete_bytes"),
    )
    rows = (
        per_manifest.groupBy(*keys)
        .agg(
            F.sum((F.col("files") > 0).cast("long")).alias("exact"),
            *[F.sum(name).alias(name) for name in SUMS],
        )
        .collect()
    )
    index = {f.name: i for i, f in enumerate(pfields)}
    out = []
    for r in rows:
        if not r.files and not r.delete_files:
            continue  # only deleted entries: not a partition of the current snapshot
        spec = specs.get(r.spec_id, Spec(r.spec_id, ()))
        key = tuple(f.normalize(r[f"p{index[f.name]}"]) if f.name in index else None for f in spec.fields)
        row = r.asDict()
        for i in range(len(pcols)):
            row.pop(f"p{i}")
        out.append({**row, "key": key, "label": spec.label(key)})
    frame_out = pd.DataFrame(out, columns=PARTITION_COLUMNS)
    return frame_out.sort_values(["spec_id", "label"], ignore_index=True)


def read_snapshots(spark: SparkSession, source: Source) -> pd.DataFrame:
    """Every snapshot in the metadata: id, commit time (microseconds, UTC), operation, manifest list."""
    rows = (
        metadata_table(spark, source, "snapshots")
        .select(
            "snapshot_id",
            F.unix_micros("committed_at").alias("committed_us"),
            "operation",
            "manifest_list",
        )
        .collect()
    )
    frame = pd.DataFrame(
        [r.asDict() for r in rows], columns=["snapshot_id", "committed_us", "operation", "manifest_list"]
    )
    return frame.sort_values("committed_us", ignore_index=True)


def _properties(jtable: Any) -> dict[str, str]:
    props = jtable.properties()
    return {str(k): str(props.get(k)) for k in list(props.keySet())}


def _format_version(jtable: Any) -> int | None:
    try:
        return int(jtable.operations().current().formatVersion())
    except Exception:  # noqa: BLE001 (a table without operations, e.g. a metadata table)
        return None


def small_file_threshold(properties: dict[str, str]) -> int:
    """Below this a data file is small: 75% of `write.target-file-size-bytes` (default 512 MB),
    the `min-file-size-bytes` that Iceberg's own rewrite_data_files uses by default."""
    target = int(properties.get("write.target-file-size-bytes", 512 * 1024 * 1024))
    return int(target * 0.75)


def metadata_dir(jtable: Any, properties: dict[str, str]) -> str:
    """Where the table writes its metadata files."""
    return properties.get("write.metadata.path") or f"{str(jtable.location()).rstrip('/')}/metadata"


def list_dir(spark: SparkSession, uri: str) -> pd.DataFrame:
    """The files directly under a directory (any file system): name, path, size, modified_ms."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    rows = []
    if fs.exists(path):
        for status in fs.listStatus(path):
            if status.isFile():
                p = status.getPath()
                rows.append(
                    (
                        str(p.getName()),
                        str(p.toString()),
                        int(status.getLen()),
                        int(status.getModificationTime()),
                    )
                )
    return pd.DataFrame(rows, columns=LISTING_COLUMNS)


def check_present(spark: SparkSession, source: Source, paths: list[str], listing: pd.DataFrame) -> None:
    """Raise `BrokenTable` naming the first of `paths` that is missing (before any Spark job reads it)."""
    store = Storage(spark)
    missing = first_missing(paths, set(listing.name), store.exists)
    if missing is not None:
        raise BrokenTable(source.describe(), missing, "is missing")


def read(
    spark: SparkSession,
    source: Source,
    jtable: Any,
    small_file_bytes: int | None = None,
    jar_name: str | None = None,
    snapshot_id: int | None = None,
) -> Metadata:
    """Everything the doctor judges, from the table's metadata only, at one snapshot; each step timed.

    Args:
        jar_name: the Iceberg runtime jar (`engine.iceberg_jar`): the entries are summed in the
            driver's JVM (`entry_counts`), else, or when that class cannot be compiled here,
            through Spark's `entries` metadata table.
        snapshot_id: the snapshot to read (None: the current one when the read begins).

    Raises:
        BrokenTable: the current manifest list or a manifest is missing, or a metadata file
            cannot be read.
    """
    with guard(source.describe()):
        return _read(spark, source, jtable, small_file_bytes, jar_name, snapshot_id)


def _partitions(
    spark: SparkSession,
    source: Source,
    jtable: Any,
    snapshot_id: int | None,
    specs: dict[int, Spec],
    default_spec: int,
    small: int,
    jar_name: str | None,
) -> tuple[pd.DataFrame, str, str | None]:
    """The partitions' sums at the snapshot (None: a table without one), the reader that summed
    them, and why not the driver's JVM."""
    if jar_name is None:
        return read_partitions(spark, source, specs, default_spec, small, snapshot_id), "spark-entries", None
    try:
        # -1 names no snapshot: the JVM's count is then empty, as the table is.
        jid = snapshot_id if snapshot_id is not None else -1
        return read_partitions_jvm(spark, jtable, jid, specs, small, jar_name), "driver-jvm", None
    except UserError as exc:  # no javac on this driver: Spark's metadata table sums the same
        return (
            read_partitions(spark, source, specs, default_spec, small, snapshot_id),
            "spark-entries",
            str(exc),
        )


def as_of(
    snapshots: pd.DataFrame, refs: dict[str, int], committed_us: int
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The snapshots and refs as they stood when the pinned snapshot was committed: the ones a
    writer committed later are left out (a ref pointing at one of those too)."""
    kept = snapshots[snapshots.committed_us <= committed_us].reset_index(drop=True)
    ids = set(kept.snapshot_id)
    return kept, {name: sid for name, sid in refs.items() if sid in ids}


def _read(
    spark: SparkSession,
    source: Source,
    jtable: Any,
    small_file_bytes: int | None,
    jar_name: str | None,
    snapshot_id: int | None,
) -> Metadata:
    timings: dict[str, float] = {}

    def timed(step: str, fn: Any) -> Any:
        t0 = time.perf_counter()
        value = fn()
        timings[step] = round(time.perf_counter() - t0, 3)
        return value

    jtable.refresh()
    # The pin: from here on, nothing read depends on the table's current snapshot.
    pinned = jtable.snapshot(snapshot_id) if snapshot_id is not None else jtable.currentSnapshot()
    if snapshot_id is not None and pinned is None:
        raise UserError(f"{source.describe()}: no snapshot {snapshot_id} in its metadata")
    pinned_id = int(pinned.snapshotId()) if pinned is not None else None
    failpoints.stall("doctor.read", spark)  # a writer commits meanwhile (the tests')
    specs, default_spec = timed("specs", lambda: specs_of(jtable))
    properties = _properties(jtable)
    small = small_file_bytes if small_file_bytes is not None else small_file_threshold(properties)
    listing = timed("listing", lambda: list_dir(spark, metadata_dir(jtable, properties)))
    manifest_list = str(pinned.manifestListLocation()) if pinned is not None else None
    if manifest_list is not None:
        check_present(spark, source, [manifest_list], listing)
    manifests = timed("manifests", lambda: read_manifests(spark, source, specs, pinned_id))
    check_present(spark, source, list(manifests.path), listing)
    partitions, entries_reader, fallback = timed(
        "entries", lambda: _partitions(spark, source, jtable, pinned_id, specs, default_spec, small, jar_name)
    )
    every = timed("snapshots", lambda: read_snapshots(spark, source))
    refs = timed(
        "refs",
        lambda: {
            r.name: int(r.snapshot_id)
            for r in metadata_table(spark, source, "refs").select("name", "snapshot_id").collect()
        },
    )
    snapshots = every
    if pinned is not None:
        snapshots, refs = as_of(every, refs, int(pinned.timestampMillis()) * 1000)
    log = timed("metadata_log", lambda: _metadata_log(spark, source, pinned_id))
    all_manifests = timed(
        "all_manifests",
        lambda: {
            str(r.path).rsplit("/", 1)[-1]
            for r in metadata_table(spark, source, "all_manifests").select("path").distinct().collect()
        },
    )
    metadata_file = log[1]
    location = str(jtable.location())

    def sizes() -> dict[str, int | None]:
        store = Storage(spark)
        return {
            "metadata_json": store.size(metadata_file) if metadata_file else None,
            "manifest_list": store.size(manifest_list) if manifest_list else None,
        }

    return Metadata(
        specs=specs,
        default_spec_id=default_spec,
        properties=properties,
        format_version=_format_version(jtable),
        location=location,
        current_snapshot_id=pinned_id,
        metadata_file=metadata_file,
        metadata_files=log[0],
        manifests=manifests,
        partitions=partitions,
        snapshots=snapshots,
        sizes=timed("sizes", sizes),
        refs=refs,
        listing=listing,
        all_manifests=all_manifests,
        manifest_lists={str(p).rsplit("/", 1)[-1] for p in every.manifest_list if p},
        small_file_bytes=small,
        timings=timings,
        entries_reader=entries_reader,
        entries_fallback=fallback,
        manifests_read=partitions.attrs.get("manifests_read"),
    )


def _metadata_log(spark: SparkSession, source: Source, snapshot_id: int | None) -> tuple[int, str | None]:
    """How many metadata files the log holds up to the newest one whose current snapshot is
    `snapshot_id`, and that file (None: the newest of all): the metadata file of the pinned read."""
    log = metadata_table(spark, source, "metadata_log_entries").select(
        "timestamp", "file", "latest_snapshot_id"
    )
    newest = None
    if snapshot_id is not None:
        newest = (
            log.where(F.col("latest_snapshot_id") == snapshot_id).orderBy(F.col("timestamp").desc()).first()
        )
    if newest is None:
        row = log.select(F.count(F.lit(1)).alias("n"), F.max_by("file", "timestamp").alias("file")).first()
        return (int(row.n), row.file) if row else (0, None)
    n = log.where(F.col("timestamp") <= newest.timestamp).count()
    return int(n), newest.file
