"""A metadata-scale state measured on a store, built in a local staging directory.

The builder JVM writes the state's tables under their URIs on the store (`s3a://bucket/...`),
through StagedFileSystem.java, which keeps the files under the state's place on the store in a
local directory instead: every path Iceberg records names the store, as if the builder had
written there, while its writes and the hundreds of commits of an as-ingested layout are local
file operations, not tens of round trips each. The staged files are then copied up as they are
(`upload`, one PUT per file straight to the store's server: building is setup, not a
measurement, and through icelab's delay proxy its thousands of requests would take minutes),
less the metadata files no reader reaches, as Iceberg's own copy of a table leaves them out.

Before the builder runs, the table Spark created on the store is staged (`download`): the
builder commits on top of its first metadata file.
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.core import object_store, storage
from icelab.core.object_store import s3
from icelab.core.storage import Storage
from icelab.datagen.copy import THREADS, copy_files, hadoop_form

FILE_SYSTEM = "icelab.metadata.StagedFileSystem"


def staged(place: str, root: Path, uri: str) -> Path:
    """Where the file at `uri`, under `place` on the store, is kept under `root`."""
    return root / hadoop_form(uri).removeprefix(hadoop_form(place)).lstrip("/")


def hadoop_conf(place: str, root: Path) -> dict[str, str]:
    """The builder JVM's Hadoop settings: the files under `place` (its scheme's file system
    replaced) kept under `root`."""
    scheme = place.split(":", 1)[0]
    return {
        f"fs.{scheme}.impl": FILE_SYSTEM,
        f"fs.{scheme}.impl.disable.cache": "true",
        "icelab.staged.prefix": place,
        "icelab.staged.root": str(root),
    }


def download(spark: SparkSession, place: str, uri: str, root: Path) -> int:
    """Stage every file under `uri` (under `place` on the store); the number of files."""
    pairs = [
        (f.path, storage.to_uri(str(staged(place, root, f.path)))) for f in Storage(spark).list_files(uri)
    ]
    # Without Hadoop's .crc files beside them: the builder's commits rewrite the version hint.
    jvm = spark.sparkContext._jvm
    raw = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark.sparkContext._jsc.hadoopConfiguration()).getRaw()
    copy_files(spark, pairs, False, raw)
    return len(pairs)


def upload(spark: SparkSession | None, root: Path, place: str, progress: bool = True) -> dict[str, Any]:
    """Copy every file staged under `root` to its place under `place` (overwriting), except the
    metadata files the table's current version no longer names; its record: files, bytes,
    seconds, and how (`put`: one request per file to the open store's server, `spark` unused;
    else `copy`, through Spark's Hadoop FileSystem)."""
    t0 = time.perf_counter()
    pairs = []
    for folder, _, names in os.walk(root):
        skip = _unreachable(Path(folder))
        pairs += [
            (Path(folder, name), storage.join(place, *Path(folder, name).relative_to(root).parts))
            for name in names
            if name not in skip
        ]
    store = object_store.active()
    if store is not None and storage.store_of(place) is not None:
        how, sent = "put", _put_all(store.server, pairs, progress)
    else:
        assert spark is not None, "a place off the open store is copied through Spark's FileSystem"
        how, sent = "copy", copy_files(spark, [(storage.to_uri(str(a)), b) for a, b in pairs], progress)
    return {"files": len(pairs), "bytes": sent, "seconds": round(time.perf_counter() - t0, 1), "how": how}


def _unreachable(folder: Path) -> set[str]:
    """In a table's metadata folder, the metadata.json files neither current (the version hint's)
    nor in the current one's metadata log (its last `write.metadata.previous-versions-max`): no
    reader reaches them, and Iceberg's own copy of a table (`rewrite_table_path`) leaves them out."""
    hint = folder / "version-hint.text"
    if folder.name != "metadata" or not hint.is_file():
        return set()
    current = f"v{hint.read_text().strip()}.metadata.json"
    logged = {current} | {
        entry["metadata-file"].rsplit("/", 1)[-1]
        for entry in json.loads((folder / current).read_text()).get("metadata-log", [])
    }
    return {p.name for p in folder.glob("v*.metadata.json")} - logged


def _put_all(ep: s3.Endpoint, pairs: list[tuple[Path, str]], progress: bool) -> int:
    """PUT each (local file, s3a:// URI) pair from a pool of threads, each over one kept-alive
    connection: one request per file (Hadoop's copy makes several); the bytes sent."""
    local = threading.local()

    def one(pair: tuple[Path, str]) -> int:
        conn = getattr(local, "conn", None) or s3.connect(ep)
        local.conn = conn
        body = pair[0].read_bytes()
        parsed = urlparse(pair[1])
        s3.put_object(conn, ep, f"/{parsed.netloc}{parsed.path}", body)
        return len(body)

    with ThreadPoolExecutor(THREADS) as pool:
        sizes = pool.map(one, pairs)
        return sum(tqdm(sizes, total=len(pairs), desc="upload", unit="file", disable=not progress))
