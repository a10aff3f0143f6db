"""A metadata-scale state mirrored to an object store: built on local disk (the builder's JVM
writes local files), then its Iceberg tables copied to `<data_dir>/meta/<name>-<hash>/` on the
store with their metadata rewritten for the new place by Iceberg's own `rewrite_table_path`
procedure (as `icelab.datagen.copy` copies a dataset).

Only metadata is copied: the metadata.json files, manifest lists and manifests, every file under
a table's `metadata/`. A state's data files are names in its manifests and exist nowhere
(planning never opens one), so their rewritten names are the only trace of them on the store.
The Parquet placeholder tree is not mirrored (`MetaState.of` refuses a store state with one).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import object_store, storage
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.session import register_iceberg_catalog
from icelab.core.storage import Storage
from icelab.datagen.copy import copy_files, hadoop_form, rewrite_table_path, write_version_hint

HOW = "Iceberg rewrite_table_path per layout; the files under each table's metadata/ copied as they are"


def _layout_pairs(
    spark: SparkSession, catalog: str, layout_name: str, source: str, target: str, staging: str
) -> tuple[list[tuple[str, str]], str]:
    """Stage one layout's metadata rewritten for `target`; the (staged, target) pairs to copy and
    the staged metadata's latest version."""
    try:
        pairs, latest = rewrite_table_path(
            spark, catalog, f"bench.{layout_name}", hadoop_form(source), target, staging
        )
    except Exception as exc:  # noqa: BLE001 (py4j: the procedure's own message is the error)
        java = getattr(exc, "java_exception", None)
        first = (str(java.getMessage()) if java is not None else str(exc)).strip().splitlines()[0][:300]
        raise UserError(f"cannot mirror layout {layout_name} to {target}: {first}") from None
    metadata = storage.join(target, "metadata") + "/"
    # Data and delete files are names only (module docstring): the metadata alone is copied.
    return [p for p in pairs if p[1].startswith(metadata)], latest


def _direct_fs(spark: SparkSession, uri: str) -> Any:
    """A FileSystem of `uri` that reaches the store without icelab's delay proxy: mirroring is
    setup, not a measurement, and at +20 ms its thousands of requests would take minutes. None
    when no proxy stands in front of the store (the target's own FileSystem then)."""
    store = object_store.active()
    if store is None or store.proxy is None:
        return None
    jvm = spark.sparkContext._jvm
    conf = jvm.org.apache.hadoop.conf.Configuration(spark.sparkContext._jsc.hadoopConfiguration())
    conf.set("fs.s3a.endpoint", store.server.url)
    return jvm.org.apache.hadoop.fs.FileSystem.newInstance(jvm.java.net.URI(uri), conf)


def mirror(
    spark: SparkSession,
    engine: EngineConfig,
    built: str,
    tables: dict[str, tuple[str, str]],
    store: str,
    staging: str,
    progress: bool = True,
) -> dict[str, Any]:
    """Copy a built state's Iceberg tables to the store (whatever was at `store` is removed).

    Args:
        built: the warehouse where the state was built (every path in it under one prefix form).
        tables: per layout, (its table where built, its table on the store).
        store: the state's place on the store.
        staging: a place for the rewritten metadata (removed after).

    Returns:
        The mirror's record for the store's completion mark: where to, files, bytes, seconds.

    Raises:
        UserError: when a layout cannot be rewritten or a file cannot be copied.
    """
    t0 = time.perf_counter()
    fs = Storage(spark)
    fs.delete(store)
    catalog = f"mirror_{uuid.uuid4().hex[:8]}"
    register_iceberg_catalog(spark, catalog, built, engine)
    staging_root = storage.join(staging, f".mirror-{uuid.uuid4().hex[:8]}")
    layouts: dict[str, Any] = {}
    direct = _direct_fs(spark, store)
    try:
        for name, (source, target) in tables.items():
            pairs, latest = _layout_pairs(
                spark, catalog, name, source, target, storage.join(staging_root, name)
            )
            copied = copy_files(spark, pairs, progress, direct)
            write_version_hint(spark, target, latest)
            layouts[name] = {"files": len(pairs), "bytes": copied}
    finally:
        fs.delete(staging_root)
        if direct is not None:
            direct.close()
    return {"to": store, "layouts": layouts, "seconds": round(time.perf_counter() - t0, 1), "how": HOW}
