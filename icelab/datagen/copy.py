"""Copy a finished dataset to another data directory instead of building it there again.

`paths.copy_from` names a data directory that holds the same dataset (same config, same hash),
finished and verified, for example a local build copied into an object store. The copy holds the
same bytes: the Parquet tree and Iceberg's data files are copied as they are, and Iceberg's
metadata, which names every file by absolute path, is rewritten for the new place by Iceberg's
own `rewrite_table_path` procedure. The caller then verifies the copy where it landed, as after
a build, so a copy that lost or changed a row fails the same way a bad build does.

Files are copied through Hadoop's FileSystem (any scheme Spark reaches) by a pool of driver
threads: one `FileUtil.copy` per file, each a py4j call of its own.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.core import storage
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.session import register_iceberg_catalog
from icelab.core.storage import Storage
from icelab.datagen.dataset import Dataset

# Copies are round trips to a store, not CPU work: more threads than cores keep it busy.
THREADS = 16


def hadoop_form(uri: str) -> str:
    """`file:///x` as Hadoop's Path prints it (`file:/x`): the form Iceberg wrote its file paths in."""
    return "file:/" + uri.removeprefix("file:///") if uri.startswith("file:///") else uri


def missing_source(copy_from: str, dataset: Dataset) -> str | None:
    """The one-line error for a `paths.copy_from` that does not hold `dataset` finished, else None.

    Only a local directory is checked here (before Spark starts); any other is checked by
    `build.ensure` when it reads the source's completion mark.
    """
    source = Dataset.of(dataset.config, copy_from)
    path = storage.local_path(source.marker_uri)
    if path is None or Path(path).is_file():
        return None
    return no_source(copy_from, dataset)


def no_source(copy_from: str, dataset: Dataset) -> str:
    """What to say when `copy_from` has no finished copy of `dataset`."""
    return (
        f"paths.copy_from={copy_from}: no finished dataset {dataset.config.name}-{dataset.hash} there; "
        "build it there first, or drop paths.copy_from to build here"
    )


def moved_source(source: Dataset, built: Dataset) -> str:
    """What to say when `source` was built at `built`, a place that is gone."""
    return (
        f"paths.copy_from: {source.uri} was built at {built.uri}, where its Iceberg metadata names "
        "every file, and that place is gone (moved?); copy it from there, or build it again"
    )


@dataclass(frozen=True)
class Plan:
    """What to copy: (source, target) pairs, and the staged metadata's latest version."""

    pairs: list[tuple[str, str]]
    latest_version: str
    staging: str


def rewrite_table_path(
    spark: SparkSession, catalog: str, ident: str, source: str, target: str, staging: str
) -> tuple[list[tuple[str, str]], str]:
    """Iceberg's `rewrite_table_path` of `ident` (in `catalog`) from the path prefix `source` to
    `target`, its rewritten metadata staged at `staging`: every (file, target) pair the procedure
    lists, and the staged metadata's latest version."""
    row = spark.sql(
        f"CALL {catalog}.system.rewrite_table_path(table => '{ident}', source_prefix => '{source}', "
        f"target_prefix => '{target}', staging_location => '{staging}')"
    ).first()
    listing = Storage(spark).read_text(row.file_list_location)
    return [tuple(line.split(",", 1)) for line in listing.splitlines() if line], row.latest_version  # type: ignore[misc]


def write_version_hint(spark: SparkSession, table_uri: str, latest_version: str) -> None:
    """The Hadoop catalog finds a table's current metadata.json through this hint."""
    version = latest_version.removeprefix("v").split(".", 1)[0]
    Storage(spark).write_text_atomic(storage.join(table_uri, "metadata", "version-hint.text"), version)


def _metadata_pairs(
    spark: SparkSession, source: Dataset, built: Dataset, target: Dataset, engine: EngineConfig
) -> Plan:
    """Stage the Iceberg metadata rewritten for `target` and list every file to copy.

    `source` is where the dataset was named; `built` is where it was written, the prefix of every
    path its metadata names (the same place, unless reached another way). The table is loaded
    from `built`: the procedure requires its current metadata file under the prefix too.
    """
    catalog = f"copysrc_{source.hash}"
    register_iceberg_catalog(spark, catalog, built.warehouse_uri, engine)
    # Staged beside the source: the procedure writes from Spark tasks, so it must be shared storage.
    staging = storage.join(source.uri.rsplit("/", 1)[0], f".copy-{source.hash}-{uuid.uuid4().hex[:8]}")
    pairs, latest = rewrite_table_path(
        spark, catalog, "bench.events", hadoop_form(built.iceberg_uri), target.iceberg_uri, staging
    )
    return Plan(pairs, latest, staging)


def _fix_location(spark: SparkSession, plan: Plan, built: Dataset, target: Dataset) -> None:
    """Point each staged metadata.json's `location` at the target.

    The table location is written as `file:///...` while every other path is `file:/...`; the
    procedure rewrites only paths under its one source prefix and leaves that field as it was,
    and a table whose location is the source would write new files (a profile's manifests) there.
    """
    fs = Storage(spark)
    for staged, _ in plan.pairs:
        if not staged.endswith(".metadata.json"):
            continue
        meta = json.loads(fs.read_text(staged))
        if meta.get("location") in (built.iceberg_uri, hadoop_form(built.iceberg_uri)):
            meta["location"] = target.iceberg_uri
            fs.write_text_atomic(staged, json.dumps(meta))


def _parquet_pairs(spark: SparkSession, source: Dataset, target: Dataset) -> Iterator[tuple[str, str]]:
    src_root = hadoop_form(source.parquet_uri)
    for f in Storage(spark).list_files(source.parquet_uri, ".parquet"):
        yield f.path, target.parquet_uri + hadoop_form(f.path).removeprefix(src_root)


def copy_files(spark: SparkSession, pairs: list[tuple[str, str]], progress: bool, dst_fs: Any = None) -> int:
    """Copy each (source, target) file; returns the bytes copied.

    Args:
        dst_fs: the Hadoop FileSystem to write through (a py4j object); None: the target's own.
    """
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()

    def one(pair: tuple[str, str]) -> int:
        src, dst = (jvm.org.apache.hadoop.fs.Path(p) for p in pair)
        src_fs, to_fs = src.getFileSystem(conf), dst_fs or dst.getFileSystem(conf)
        size = int(src_fs.getFileStatus(src).getLen())
        if not jvm.org.apache.hadoop.fs.FileUtil.copy(src_fs, src, to_fs, dst, False, True, conf):
            raise UserError(f"copy of {pair[0]} to {pair[1]} failed")
        return size

    copied = 0
    with ThreadPoolExecutor(THREADS) as pool:
        sizes = pool.map(one, pairs)
        for size in tqdm(sizes, total=len(pairs), desc="copy", unit="file", disable=not progress):
            copied += size
    return copied


def copy_dataset(
    spark: SparkSession,
    source: Dataset,
    target: Dataset,
    engine: EngineConfig,
    progress: bool = True,
    built: Dataset | None = None,
) -> dict[str, Any]:
    """Copy the finished dataset `source` to `target`'s place (same hash, another data directory).

    Args:
        built: `source` where its completion mark says it was built (`source` if None). Iceberg's
            metadata names every file under it, so its prefix is the one rewritten; it differs
            from `source` when the directory is reached another way (through a symlink).

    Returns:
        The copy's record for the completion mark: where from, files, bytes and seconds.

    Raises:
        UserError: when a file cannot be copied.
    """
    t0 = time.perf_counter()
    fs = Storage(spark)
    built = built or source
    plan = _metadata_pairs(spark, source, built, target, engine)
    try:
        _fix_location(spark, plan, built, target)
        pairs = plan.pairs + list(_parquet_pairs(spark, source, target))
        copied = copy_files(spark, pairs, progress)
        write_version_hint(spark, target.iceberg_uri, plan.latest_version)
    finally:
        fs.delete(plan.staging)
    return {
        "from": source.uri,
        "files": len(pairs),
        "bytes": copied,
        "iceberg_metadata": plan.latest_version,
        "seconds": round(time.perf_counter() - t0, 1),
        "how": "Iceberg rewrite_table_path for the metadata; every file copied as it is",
    }
