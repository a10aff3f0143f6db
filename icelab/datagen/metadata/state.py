"""A metadata-scale table state: Iceberg tables of metadata only (one per manifest layout) and,
up to a file count, the Parquet table's Hive `date=` tree of placeholder files.

Layout under `<data_dir>/meta/<name>-<hash>/`:
    counts.bin                      files per (ingest batch, day), big-endian int32
    iceberg/bench/<layout>/metadata the Iceberg tables (Hadoop catalog meta_<hash>)
    parquet/events/date=YYYY-MM-DD/ placeholder files: sparse, the entries' sizes, never opened;
                                    Spark's names, each with its hidden .crc (as Spark writes
                                    to local disk)
    state.json                      written last: the completion mark (build times, disk, counts)

Planning lists files and reads manifests but never opens a data file, so planning can be
measured on these states; executing a query on them fails (the files do not exist).

A state measured on an object store is built for it: Spark creates its tables there, the builder
JVM writes them under their store URIs into a local staging directory, and the staged files are
copied up as they are (`icelab.datagen.metadata.staging`); the template dataset and the counts
are read on local disk (`<copy_from>`). Only its Iceberg tables are on the store, with the
completion mark beside them; it has no Parquet tree.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pyspark.sql import SparkSession

from icelab.core import locks, storage
from icelab.core.config import EngineConfig, parse_size
from icelab.core.config.metadata import MetadataScaleConfig, MetaSizeConfig
from icelab.core.errors import UserError
from icelab.core.results import write_json
from icelab.core.session import register_iceberg_catalog
from icelab.core.storage import Storage
from icelab.datagen.dataset import Dataset
from icelab.datagen.ingest import create_iceberg_table
from icelab.datagen.metadata import layout, shapes, staging
from icelab.datagen.metadata.java import BUILDER_VERSION, MAIN, run_builder

MARKER = "state.json"
ON_STORE = "on-store"  # under the build root: what the builder reads of a state built on a store
AS_INGESTED = "as_ingested"
STAGED = "staged"  # in a store state's local directory: its files, until copied up


def meta_root(experiment: MetadataScaleConfig, data_dir: str, copy_from: str | None = None) -> Path:
    """Where states are built, on local disk: `experiment.meta_dir`, else `<data_dir>/meta`; for a
    data directory elsewhere (an object store), `<copy_from>/meta` holds what the builder reads
    of a state it builds on the store (the counts; the template dataset is under `copy_from`).

    Raises:
        UserError: for a build place that is not on local disk, or a data directory elsewhere
            without a local `paths.copy_from` (the builder reads its template there).
    """
    if store_root(data_dir) is not None and (
        copy_from is None or storage.local_path(storage.to_uri(copy_from)) is None
    ):
        raise UserError(
            f"{data_dir}: metadata-scale states are built on the store from a template dataset on "
            "local disk; give paths.copy_from, a local data directory holding it (e.g. data)"
        )
    where = experiment.meta_dir or storage.join(storage.to_uri(copy_from or data_dir), "meta")
    uri = storage.to_uri(where)
    if not uri.startswith("file:"):
        raise UserError(
            f"{where}: metadata-scale states are built through local disk (the builder reads and "
            "writes local files; a store gets a copy); give a local experiment.meta_dir"
        )
    return Path(uri.removeprefix("file://").removeprefix("file:"))


def store_root(data_dir: str) -> str | None:
    """`<data_dir>/meta` when the data directory is not on local disk (states are built there),
    else None."""
    uri = storage.to_uri(data_dir)
    return None if uri.startswith("file:") else storage.join(uri, "meta")


def builds_parquet(size: MetaSizeConfig, experiment: MetadataScaleConfig) -> bool:
    """Whether a state has the Parquet placeholder tree: asked for, and within parquet_max_files."""
    return size.parquet and size.data_files <= experiment.parquet_max_files


def spec_of(size: MetaSizeConfig, experiment: MetadataScaleConfig, template: Dataset) -> dict[str, Any]:
    """What a state's hash is made of: what decides its content."""
    spec = {
        "size": size.model_dump(mode="json", include=set(BUILD_KEYS)),
        "skew": experiment.model_dump(
            mode="json",
            include={"late_fraction", "late_max_days", "clock_skew_fraction", "touch", "rows_per_file"},
        ),
        "end": experiment.end.isoformat(),
        "parquet": builds_parquet(size, experiment),
        "seed": experiment.seed,
        "template": template.hash,
        # The code that decides the content: the Java builder's entries (its declared version, which
        # a refactoring keeps: icelab.datagen.metadata.java) and the layout draws.
        "builder": BUILDER_VERSION,
        "layout": hashlib.sha256(Path(layout.__file__).read_bytes()).hexdigest()[:12],
    }
    if size.shaped:
        # Only a shaped state names its shape and the builder that writes it, so icelab's own
        # states keep the hashes (and the stored results) they had before shapes existed.
        spec["shape"] = shapes.shape_key(size)
    return spec


@dataclass(frozen=True)
class MetaState:
    """One state: its config, the dataset whose entries it copies, its hash and place."""

    name: str
    size: MetaSizeConfig
    experiment: MetadataScaleConfig
    template: Dataset
    seed: int
    hash: str
    path: Path  # where it is built, on local disk (on a store: its counts only)
    store: str | None = None  # where it is built and measured, when not on local disk

    @classmethod
    def of(
        cls,
        name: str,
        size: MetaSizeConfig,
        experiment: MetadataScaleConfig,
        template: Dataset,
        data_dir: str,
        copy_from: str | None = None,
    ) -> MetaState:
        """The state a config describes, built under `meta_root` or, for a data directory not on
        local disk, at `<data_dir>/meta/<name>-<hash>` on the store (the builder's template is then
        the dataset under `copy_from`: the same dataset, the same hash).

        Raises:
            UserError: as `meta_root`; for a state with a Parquet tree on a store (not built there).
        """
        root = meta_root(experiment, data_dir, copy_from)
        spec = spec_of(size, experiment, template)
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
        on_store = store_root(data_dir)
        if on_store is None:
            return cls(name, size, experiment, template, experiment.seed, digest, root / f"{name}-{digest}")
        if builds_parquet(size, experiment):
            raise UserError(
                f"meta.{name}: its Parquet placeholder tree is not built on a store; "
                f"set meta.{name}.parquet=false (the Iceberg tables are)"
            )
        assert copy_from is not None  # meta_root refuses a store without it
        local = Dataset.of(template.config, copy_from)
        # Apart from the local state of the same hash, which has a completion mark of its own.
        path = root / ON_STORE / f"{name}-{digest}"
        store = storage.join(on_store, path.name)
        return cls(name, size, experiment, local, experiment.seed, digest, path, store)

    @property
    def label(self) -> str:
        """`<name>-<hash>`: the `dataset` column of its measurements."""
        return f"{self.name}-{self.hash}"

    @property
    def catalog(self) -> str:
        """The Iceberg catalog of its tables, caches as the engine pins them (off)."""
        return f"meta_{self.hash}"

    @property
    def build_catalog(self) -> str:
        """A catalog of the tables where they are built: Spark keeps a catalog it has loaded, so
        the catalog measured is never the one built through, nor that of the same state built in
        another place."""
        return f"metabuild_{self.hash}_{hashlib.sha256(str(self.path).encode()).hexdigest()[:6]}"

    @property
    def cached_catalog(self) -> str:
        """The same warehouse through a catalog with Iceberg's catalog and manifest caches on."""
        return f"meta_{self.hash}_cached"

    @property
    def layouts(self) -> list[str]:
        """`as_ingested`, then every rewrite layout."""
        return [AS_INGESTED, *self.size.rewrites]

    @property
    def has_parquet(self) -> bool:
        """Whether the Parquet placeholder tree is built (up to experiment.parquet_max_files)."""
        return builds_parquet(self.size, self.experiment)

    def table(self, layout_name: str, cached: bool = False) -> str:
        """A layout's Iceberg table name."""
        return f"{self.cached_catalog if cached else self.catalog}.bench.{layout_name}"

    def table_path(self, layout_name: str) -> Path:
        """A layout's Iceberg table directory where it is built."""
        return self.path / "iceberg" / "bench" / layout_name

    def built_uri(self, layout_name: str | None = None) -> str:
        """Its warehouse (or a layout's table) where it is built: on the store, or on local disk
        (the builder names a local state's manifest lists by plain path, the rest `file:///`)."""
        if self.store:
            return self.warehouse_uri if layout_name is None else self.table_uri(layout_name)
        where = self.path / "iceberg" if layout_name is None else self.table_path(layout_name)
        return storage.to_uri(str(where))

    @property
    def warehouse_uri(self) -> str:
        """The warehouse its catalogs read, where it is built: on the store, or on local disk."""
        return storage.join(self.store, "iceberg") if self.store else self.built_uri()

    def table_uri(self, layout_name: str) -> str:
        """A layout's Iceberg table where it is measured (`warehouse_uri`)."""
        return storage.join(self.warehouse_uri, "bench", layout_name)

    @property
    def parquet_path(self) -> Path:
        """Root of the placeholder Parquet table."""
        return self.path / "parquet" / "events"

    @property
    def parquet_table(self) -> str:
        """Spark catalog name of the placeholder Parquet table."""
        return f"spark_catalog.default.meta_{self.hash}"

    @property
    def first_day(self) -> dt.date:
        """The first daily partition."""
        return self.experiment.end - dt.timedelta(days=self.size.days)

    def counts(self) -> np.ndarray:
        """Files per (as-ingested manifest, day)."""
        e = self.experiment
        return layout.file_counts(
            self.size.data_files,
            self.size.manifests,
            self.size.days,
            self.seed,
            late=e.late_fraction,
            late_days=e.late_max_days,
            skew=e.clock_skew_fraction,
            touch=e.touch,
        )


# What decides a state's content (the rest of MetaSizeConfig is what is measured on it).
BUILD_KEYS = ("data_files", "manifests", "manifests_per_commit", "days", "rewrites", "parquet")


def register(spark: SparkSession, state: MetaState, engine: EngineConfig) -> None:
    """Both catalogs of the state's warehouse, and its Parquet table when there is one."""
    warehouse = state.warehouse_uri
    register_iceberg_catalog(spark, state.catalog, warehouse, engine)
    register_iceberg_catalog(
        spark, state.cached_catalog, warehouse, engine.model_copy(update={"iceberg_metadata_cache": True})
    )
    if state.has_parquet:
        register_parquet(spark, state)


def register_parquet(spark: SparkSession, state: MetaState) -> None:
    """The placeholder tree as a partitioned Parquet table, its schema the template's.

    The schema cannot be inferred from placeholder files, so it is given; RECOVER PARTITIONS
    lists the tree once, outside any timed section, as the real dataset's registration does.
    """
    schema = spark.table(state.template.parquet_table).schema
    ddl = spark._jvm.org.apache.spark.sql.types.DataType.fromJson(schema.json()).toDDL()
    spark.sql(f"DROP TABLE IF EXISTS {state.parquet_table}")
    spark.sql(
        f"CREATE TABLE {state.parquet_table} ({ddl}) USING parquet PARTITIONED BY (date) "
        f"LOCATION '{storage.to_uri(str(state.parquet_path))}'"
    )
    spark.sql(f"ALTER TABLE {state.parquet_table} RECOVER PARTITIONS")


def read_marker(state: MetaState) -> dict[str, Any] | None:
    """The completion mark's content, or None for a missing or unfinished state."""
    marker = state.path / MARKER
    if not marker.exists():
        return None
    info = json.loads(marker.read_text())
    return info if info.get("hash") == state.hash else None


def disk_bytes(root: Path) -> int:
    """Bytes the directory really occupies (allocated blocks: sparse placeholders count ~0)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def ensure(
    spark: SparkSession, state: MetaState, engine: EngineConfig, force: bool = False, progress: bool = True
) -> dict[str, Any]:
    """Reuse the finished state, or build it (an unfinished one is wiped first); register it.

    Returns:
        The completion mark's content: per layout manifests, bytes, entries and build seconds;
        Parquet placeholder count; disk use.
    """
    what, key = f"metadata state {state.label}", locks.key_of(str(state.path))
    locks.acquire(key, what, exclusive=True)
    if state.store is not None:
        info = _on_store(spark, state, engine, force, progress)
    else:
        info = None if force else read_marker(state)
        if info is None:
            info = _build(spark, state, engine, progress)
            write_json(state.path / MARKER, info)  # atomic: the mark exists whole or not at all
    locks.acquire(key, what, exclusive=False)
    register(spark, state, engine)
    return info


def _on_store(
    spark: SparkSession, state: MetaState, engine: EngineConfig, force: bool, progress: bool
) -> dict[str, Any]:
    """The store's completion mark: reused when it names this state, else the state built there
    (whatever was at its place removed first) and the mark written last. A mark of the same state
    mirrored there by earlier code (`"mirror"`) is reused too: the same tables, copied."""
    assert state.store is not None
    fs, marker = Storage(spark), storage.join(state.store, MARKER)
    if not force and fs.exists(marker):
        found = json.loads(fs.read_text(marker))
        if found.get("hash") == state.hash:
            return found
    print(f"{state.label}: building on {state.store}", file=sys.stderr)
    fs.delete(state.store)
    info = _build(spark, state, engine, progress)
    fs.write_text_atomic(marker, json.dumps(info))
    return info


def _build(spark: SparkSession, state: MetaState, engine: EngineConfig, progress: bool) -> dict[str, Any]:
    if not Path(state.template.iceberg_uri.removeprefix("file://")).is_dir():
        raise UserError(
            f"{state.template.uri}: the template dataset of {state.label} is not there "
            "(the builder reads its data files' entries); build or copy it there first"
        )
    shutil.rmtree(state.path, ignore_errors=True)
    state.path.mkdir(parents=True)
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    counts = state.counts()
    counts_file = state.path / "counts.bin"
    counts.astype(">i4").tofile(counts_file)
    register_iceberg_catalog(spark, state.build_catalog, state.built_uri(), engine)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {state.build_catalog}.bench")
    schema = spark.table(state.template.iceberg_table).schema
    rows_per_file = spark.sql(f"SELECT avg(record_count) FROM {state.template.iceberg_table}.files").first()[
        0
    ]
    common = {
        "template": state.template.iceberg_uri.removeprefix("file://"),
        "counts": str(counts_file),
        "commits": state.size.manifests,
        "days": state.size.days,
        "first_day": state.first_day.isoformat(),
        "seed": state.seed,
        "scale": state.experiment.rows_per_file / rows_per_file,
        "ts_column": "timestamp",
        "threads": state.experiment.threads,
    }
    size = state.size
    # A state measured on a store is written to a local staging copy, then copied up.
    place, stage = state.store, state.path / STAGED
    layouts: dict[str, Any] = {}
    for name in state.layouts:
        create_iceberg_table(
            spark,
            state.template,
            shapes.table_schema(schema, size.columns),
            table=f"{state.build_catalog}.bench.{name}",
            partitioned_by=shapes.PARTITIONED_BY[size.partitioning],
        )
        if place:
            staging.download(spark, place, state.built_uri(name), stage)
        args = {**common, "target": state.built_uri(name) if state.store else str(state.table_path(name))}
        if size.shaped:
            args |= shapes.builder_args(size)
        if name == AS_INGESTED:
            args |= {"layout": "as_ingested", "manifests_per_commit": state.size.manifests_per_commit}
            if state.has_parquet:
                args["parquet_root"] = str(state.parquet_path)
        else:
            # A rewrite is planned from the as-ingested layout's bytes per entry (built first).
            entry_bytes = layouts[AS_INGESTED]["manifest_bytes"] / layouts[AS_INGESTED]["entries"]
            target = parse_size(size.rewrites[name])
            if size.shaped:
                # ShapedBuilder sorts by the partition tuple itself: below a day, or a category
                # before it, the day ranges of the plan below do not describe the rewrite.
                args |= {"layout": "clustered", "entry_bytes": entry_bytes, "target_bytes": target}
            else:
                starts, per_manifest = layout.clustered_plan(counts.sum(axis=0), entry_bytes, target)
                args |= {
                    "layout": "clustered",
                    "ranges": ",".join(map(str, starts)),
                    "entries_per_manifest": per_manifest,
                }
        t = time.perf_counter()
        result = run_builder(
            args,
            int(counts.sum()),
            engine.iceberg_jar,
            state.size.heap,
            f"{state.name} {name}",
            progress,
            state.experiment.builder_java_options,
            shapes.BUILDER_MAIN if size.shaped else MAIN,
            staging.hadoop_conf(place, stage) if place else None,
        )
        layouts[name] = result | {"wall_s": time.perf_counter() - t, "target": state.size.rewrites.get(name)}
    if place:
        uploaded = staging.upload(spark, stage, place, progress)
        shutil.rmtree(stage)
    info = {
        "name": state.name,
        "hash": state.hash,
        "path": str(state.path),
        "created_utc": started.isoformat(timespec="seconds"),
        "size": state.size.model_dump(mode="json"),
        "template": {
            "dataset": f"{state.template.config.name}-{state.template.hash}",
            "rows_per_file": rows_per_file,
        },
        "data_files": int(counts.sum()),
        "days": state.size.days,
        "first_day": state.first_day.isoformat(),
        "as_ingested_days_per_manifest": layout.manifest_days(counts).tolist(),
        "layouts": layouts,
        "parquet_files": int(counts.sum()) if state.has_parquet else 0,
        "build_wall_s": time.perf_counter() - t0,
        "disk_bytes": disk_bytes(state.path),
    }
    if place:
        info["uploaded"] = uploaded
    return info
