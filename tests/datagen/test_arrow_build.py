"""The arrow builder's tiny dataset (tiny's default) against Spark's: the same rows, the same
layout, the metrics Iceberg's own writer gives the same rows; and its bytes, pinned."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icelab.core import storage
from icelab.core.config import dataset_config
from icelab.core.iceberg import load_table
from icelab.datagen.arrow_ingest import appender, footer_copy
from icelab.datagen.build import Built, ensure
from icelab.datagen.dataset import ARROW_BYTES, Dataset
from icelab.datagen.dictionaries import dictionary_columns

# Metrics that follow from the rows. Column sizes and split offsets follow from the bytes, which
# pyarrow writes otherwise than parquet-mr (docs/dataset.md says so).
SAME_METRICS = (
    "record_count",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
)
# What a manifest entry says of its file beyond the rows: it follows from the bytes.
BYTE_METRICS = ("file_size_in_bytes", "column_sizes", "split_offsets")


@pytest.fixture(scope="module")
def arrow_tiny(tiny) -> Built:
    assert tiny.dataset.config.builder == "arrow"
    return tiny


@pytest.fixture(scope="module")
def spark_tiny(ctx, compose_run, data_dir: Path) -> Built:
    ds = dataset_config(compose_run("dataset.builder=spark"))
    return ensure(ctx.spark, Dataset.of(ds, str(data_dir)), ctx.engine, progress=False)


def test_the_same_rows_as_sparks_build(spark_tiny, arrow_tiny):
    # Four readers agreed on each build; the two builds agree with each other.
    assert arrow_tiny.dataset.hash != spark_tiny.dataset.hash  # other bytes, another dataset
    assert arrow_tiny.info["verification"] == spark_tiny.info["verification"]


def _files(ctx, built: Built):
    # Every file was added by an append: its entry's sequence number is its commit.
    table = built.dataset.iceberg_table
    return ctx.spark.sql(
        f"SELECT sequence_number AS commit, data_file.partition.timestamp_day AS day, data_file.* "
        f"FROM {table}.entries"
    ).drop("partition")


def test_one_file_per_day_partition_per_commit_in_both_formats(ctx, spark_tiny, arrow_tiny):
    ds = arrow_tiny.dataset
    spark_files = {(r.commit, r.day) for r in _files(ctx, spark_tiny).collect()}
    arrow_files = [(r.commit, r.day) for r in _files(ctx, arrow_tiny).collect()]
    assert sorted(arrow_files) == sorted(spark_files)  # the same (commit, day) pairs, each once
    # The Parquet table: one file per commit in each day's directory, as many as Iceberg's.
    per_day = {
        d.name: len(list(d.glob("*.parquet"))) for d in Path(storage.local_path(ds.parquet_uri)).iterdir()
    }
    iceberg_per_day: dict[str, int] = {}
    for _, day in arrow_files:
        iceberg_per_day[f"date={day}"] = iceberg_per_day.get(f"date={day}", 0) + 1
    assert per_day == iceberg_per_day


def test_one_manifest_per_commit(ctx, arrow_tiny):
    table = arrow_tiny.dataset.iceberg_table
    manifests = ctx.spark.sql(f"SELECT added_snapshot_id FROM {table}.manifests").collect()
    snapshots = ctx.spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").collect()
    assert len(snapshots) == arrow_tiny.dataset.config.commits
    assert sorted(m.added_snapshot_id for m in manifests) == sorted(s.snapshot_id for s in snapshots)


def test_the_metrics_icebergs_writer_gives_the_same_rows(ctx, spark_tiny, arrow_tiny):
    def metrics(built: Built) -> dict:
        rows = _files(ctx, built).select("commit", "day", *SAME_METRICS).collect()
        return {(r.commit, r.day): {m: r[m] for m in SAME_METRICS} for r in rows}

    theirs, mine = metrics(spark_tiny), metrics(arrow_tiny)
    assert mine.keys() == theirs.keys()
    differ = [(k, m) for k in theirs for m in SAME_METRICS if theirs[k][m] != mine[k][m]]
    assert differ == []


def _dictionary_pages(path: Path) -> frozenset[str]:
    """The columns a file holds with a dictionary page."""
    group = pq.ParquetFile(path).metadata.row_group(0)
    chunks = [group.column(c) for c in range(group.num_columns)]
    return frozenset(c.path_in_schema for c in chunks if c.has_dictionary_page)


def _parquet_files(built: Built) -> list[Path]:
    return sorted(Path(storage.local_path(built.dataset.parquet_uri)).rglob("*.parquet"))


def test_parquet_mrs_dictionary_rule_on_the_files_spark_wrote(ctx, spark_tiny):
    # The rule the arrow builder follows, applied to each file Spark wrote (both tables' writers
    # are parquet-mr), gives the columns that file holds with a dictionary page.
    iceberg = [Path(storage.local_path(r.file_path)) for r in _files(ctx, spark_tiny).collect()]
    parquet = _parquet_files(spark_tiny)
    assert len(iceberg) == len(parquet) > 0
    paths = iceberg + parquet
    differ = [p for p in paths if set(dictionary_columns(pq.read_table(p), [0])[0]) != _dictionary_pages(p)]
    assert differ == []


def test_dictionary_pages_where_sparks_writers_keep_them(ctx, spark_tiny, arrow_tiny):
    def iceberg(built: Built) -> dict:
        rows = _files(ctx, built).collect()
        return {(r.commit, r.day): _dictionary_pages(Path(storage.local_path(r.file_path))) for r in rows}

    def parquet(built: Built) -> dict:
        # The Parquet table's files carry no commit: each day's files, as a sorted list.
        days: dict[str, list] = {}
        for p in _parquet_files(built):
            days.setdefault(p.parent.name, []).append(sorted(_dictionary_pages(p)))
        return {day: sorted(pages) for day, pages in days.items()}

    theirs, mine = iceberg(spark_tiny), iceberg(arrow_tiny)
    assert mine.keys() == theirs.keys()
    assert [k for k in theirs if mine[k] != theirs[k]] == []
    assert len(set(theirs.values())) > 1  # the choice is each file's, not one list for all
    assert parquet(arrow_tiny) == parquet(spark_tiny)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _plain(value: object) -> object:
    """A metric as comparable text: maps sorted by key, bytes in hex."""
    if isinstance(value, dict):
        return sorted((k, _plain(v)) for k, v in value.items())
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def bytes_digest(ctx, built: Built) -> str:
    """sha256 over every data file's bytes, each named by what places it (its commit and day in
    Iceberg, its day directory in the Parquet table, not its random name), and over the metrics
    of its manifest entry: what `ARROW_BYTES` pins."""
    lines = []
    for r in _files(ctx, built).collect():
        metrics = [_plain(r[m]) for m in (*SAME_METRICS, *BYTE_METRICS)]
        lines.append(f"iceberg {r.commit} {r.day} {_sha256(Path(storage.local_path(r.file_path)))} {metrics}")
    for f in Path(storage.local_path(built.dataset.parquet_uri)).rglob("*.parquet"):
        lines.append(f"parquet {f.parent.name} {_sha256(f)}")
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def test_the_files_are_the_bytes_the_dataset_hash_names(ctx, arrow_tiny):
    # The hash covers ARROW_BYTES, not the builder's code: a change that alters the files must
    # update it here, and so moves every arrow dataset's hash (docs/dataset.md).
    digest = bytes_digest(ctx, arrow_tiny)
    assert digest == ARROW_BYTES, (
        f"the arrow builder's files changed: set ARROW_BYTES = {digest!r} in icelab/datagen/dataset.py"
    )


def _added(jvm, table, snapshot) -> dict[str, tuple]:
    """Each file a snapshot added, by path: its size, rows and every metric of its entry."""
    to_bytes = jvm.org.apache.iceberg.util.ByteBuffers.toByteArray

    def plain(metric, convert=lambda v: v) -> list | None:
        return None if metric is None else sorted((int(k), convert(v)) for k, v in metric.items())

    out = {}
    files = snapshot.addedDataFiles(table.io()).iterator()
    while files.hasNext():
        f = files.next()
        out[str(f.path())] = (
            f.recordCount(),
            f.fileSizeInBytes(),
            *(plain(m) for m in (f.columnSizes(), f.valueCounts(), f.nullValueCounts(), f.nanValueCounts())),
            plain(f.lowerBounds(), lambda v: bytes(to_bytes(v))),
            plain(f.upperBounds(), lambda v: bytes(to_bytes(v))),
            list(f.splitOffsets()),
        )
    return out


def test_a_commit_from_footer_copies_gives_each_file_its_own_entry(ctx, arrow_tiny, tmp_path):
    # On an object store the driver commits from local copies of the footers (and the sizes the
    # workers sent), not from the files: the entries must be the ones the files themselves give.
    jvm = ctx.spark._jvm
    source = load_table(ctx.spark, arrow_tiny.dataset.iceberg_table)
    first = source.snapshots().iterator().next()
    theirs = _added(jvm, source, first)
    field = str(source.spec().fields().get(0).name())
    day = {r.file_path: r.day for r in _files(ctx, arrow_tiny).collect()}
    lines = []
    for n, path in enumerate(theirs):
        data = Path(storage.local_path(path)).read_bytes()
        footer_copy(data, tmp_path / f"{n}.footer")
        lines.append(f"{path}\t{field}={day[path]}\t{tmp_path / f'{n}.footer'}\t{len(data)}")
    tables = jvm.org.apache.iceberg.hadoop.HadoopTables(ctx.spark._jsc.hadoopConfiguration())
    copy = tables.create(source.schema(), source.spec(), source.properties(), str(tmp_path / "copy"))
    appender(ctx.spark, copy, ctx.engine.iceberg_jar)(lines, "")
    copy.refresh()
    mine = _added(jvm, copy, copy.currentSnapshot())
    assert len(mine) == len(theirs) > 1
    assert [p for p in theirs if mine[p] != theirs[p]] == []
