"""A scratch copy of a table that leaves no trace: the table's metadata at one snapshot, registered
in a Hadoop catalog of icelab's own under the results directory, never in the user's catalog.

The copy's metadata.json is the table's with three changes, so that every file a statement on the
copy writes (manifests, manifest lists, metadata.json, version hint) lands under the copy's own
directory and none under the table's:
- `location` is the copy's directory (Iceberg writes new metadata under a table's location;
  a Hadoop catalog refuses `write.metadata.path`, so the location itself moves);
- `metadata-log` is empty, and `write.metadata.delete-after-commit.enabled` is off: a commit on
  the copy never deletes an old metadata file, which would be the table's;
- `write.metadata.path` is dropped (a Hadoop catalog refuses to commit with it set).
Data files are shared, by their absolute paths: the doctor never writes, moves or deletes one on a
copy (its statements there are the manifest rewrite, table properties, and snapshot expiry
without file cleanup).

Each copy lives in `<results>/doctor-scratch/<token>/`, held by an `flock` on its `.lock` while
its process lives. A process killed with -9 loses the lock with its life; the next doctor run
removes what it left (`sweep`). A copy is removed when the doctor is done with it, unless kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import storage
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.session import register_iceberg_catalog
from icelab.health.source import COPY_SUFFIX, Source, load, quote

DIRECTORY = "doctor-scratch"  # under the results directory
KEPT = "doctor-copies"  # beside it: copies kept by --keep-copy, removed by hand
NAMESPACE = "scratch"
LOCK = ".lock"
REGISTERED = "registered.metadata.json"
# Table properties the copy must not carry (see the module's docstring).
DROPPED = ("write.metadata.path",)
KEEP_OLD_METADATA = {"write.metadata.delete-after-commit.enabled": "false"}


@dataclass
class ScratchCopy:
    """A registered scratch copy: its directory, how this session reaches it, the loaded table."""

    root: Path
    source: Source
    jtable: Any
    _fd: int | None = None

    def remove(self) -> None:
        """Remove the copy's whole directory (the catalog is the directory: nothing else to drop)."""
        shutil.rmtree(self.root, ignore_errors=True)
        self.release()

    def release(self) -> None:
        """Let go of the lock (the directory stays: a kept copy)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _held(directory: Path) -> bool:
    """Whether a live process holds the copy's lock."""
    try:
        fd = os.open(directory / LOCK, os.O_RDWR)
    except OSError:
        return False  # no lock file: a copy whose process died while making it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def sweep(base: Path) -> list[Path]:
    """Remove every copy under `base` that no live process holds (a killed run's); the copies
    removed. A copy kept by `--keep-copy` sits under KEPT instead, which no sweep reaches. The
    doctor sweeps once per table, before its first read (`diagnosis.diagnose`)."""
    if not base.is_dir():
        return []
    gone = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        if not _held(directory):
            shutil.rmtree(directory, ignore_errors=True)
            gone.append(directory)
    return gone


def _copy_metadata(spark: SparkSession, jtable: Any, metadata_file: str, location: str) -> str:
    """The table's metadata at `metadata_file` as JSON, changed as the module's docstring says
    (read through Iceberg's parser: a gzipped or remote metadata.json alike)."""
    parser = spark.sparkContext._jvm.org.apache.iceberg.TableMetadataParser
    doc = json.loads(str(parser.toJson(parser.read(jtable.io(), metadata_file))))
    doc["location"] = location
    doc["metadata-log"] = []
    props = {k: v for k, v in (doc.get("properties") or {}).items() if k not in DROPPED}
    doc["properties"] = props | KEEP_OLD_METADATA
    return json.dumps(doc)


def open_copy(
    spark: SparkSession,
    engine: EngineConfig,
    source: Source,
    jtable: Any,
    metadata_file: str,
    base: Path,
    kept: bool = False,
) -> ScratchCopy:
    """Register a scratch copy of the table at `metadata_file` under `base` (a kept copy under
    KEPT beside it, which no sweep removes).

    Raises:
        UserError: `base` cannot be written (nothing is left behind).
    """
    root = (base.parent / KEPT if kept else base) / uuid.uuid4().hex[:12]
    fd = None
    try:
        root.mkdir(parents=True)
        fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        warehouse = storage.to_uri(str(root.resolve()))
        name = _name(source) + COPY_SUFFIX
        location = storage.join(warehouse, NAMESPACE, name)
        staged = root / REGISTERED
        staged.write_text(_copy_metadata(spark, jtable, metadata_file, location))
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        shutil.rmtree(root, ignore_errors=True)
        raise UserError(f"cannot write a scratch copy under {base}: {exc.strerror or exc}") from None
    catalog = f"icelab_scratch_{root.name}"
    register_iceberg_catalog(
        spark, catalog, warehouse, engine.model_copy(update={"catalog_type": "hadoop", "catalog_uri": None})
    )
    copy = Source(
        f"scratch copy of {source.given}",
        "hadoop",
        catalog,
        f"{NAMESPACE}.{quote(name)}",
        location,
        warehouse,
    )
    scratch = ScratchCopy(root, copy, None, fd)
    try:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{NAMESPACE}")
        spark.sql(
            f"CALL {catalog}.system.register_table(table => '{copy.ident}', "
            f"metadata_file => '{storage.to_uri(str(staged.resolve()))}')"
        ).collect()
        scratch.jtable = load(spark, copy)
    except Exception:
        scratch.remove()
        raise
    return scratch


def _name(source: Source) -> str:
    """The table's own name, for the copy's (`events` of `db.events` or of `/wh/db/events`)."""
    if source.ident:
        return source.ident.rsplit(".", 1)[-1].strip("`")
    location = (source.location or "table").rstrip("/")
    parts = location.rsplit("/", 3)
    # a metadata.json read by path: <table>/metadata/<file>
    return parts[-3] if location.endswith((".json", ".gz")) and len(parts) >= 3 else parts[-1]


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `root`, with its size (-1 for a directory) and mtime in ns:
    what a tool that leaves no trace leaves as it found it."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            found[path] = (-1 if name in dirs else st.st_size, st.st_mtime_ns)
    return found


def traces(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    """What changed between two `tree`s: each path added, removed or changed, in order."""
    added = [f"added {p}" for p in sorted(set(after) - set(before))]
    removed = [f"removed {p}" for p in sorted(set(before) - set(after))]
    changed = [f"changed {p}" for p in sorted(set(before) & set(after)) if before[p] != after[p]]
    return [*added, *removed, *changed]
