"""Which table the user means, and how this session reaches it.

Four ways to name a table:
- `hadoop` (the default), a table directory: a Hadoop-catalog table (it has
  `metadata/version-hint.text`) is read and maintained through a Hadoop catalog on its
  warehouse (the directory two levels up), so the printed SQL names `<catalog>.<ns>.<table>`.
- `hadoop`, a `metadata.json` file (or a table directory without a version hint, e.g. written
  by a Hive or REST catalog): read by path, as of that metadata file. Nothing can be committed
  to a table read this way; `--copy` registers a copy in a Hadoop catalog of its own.
- `hadoop` with a warehouse and `db.table`: that table of a Hadoop catalog.
- `hive` or `rest` with a URI and `db.table`: a table of that catalog.

Local paths are checked before Spark starts (unknown path, not an Iceberg table); remote ones
(hdfs://, s3a://) once it has, through Hadoop's file system.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from icelab.core import storage
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.iceberg import load_table
from icelab.core.session import register_iceberg_catalog
from icelab.health.broken import diagnose_failure

CATALOGS = ("hadoop", "hive", "rest")
# The name a copy the doctor registers gets: the table's, with this suffix.
COPY_SUFFIX = "_doctor_copy"
METADATA_JSON = re.compile(r"^(?:v(\d+)|(\d+)-[0-9a-f-]+)\.metadata\.json(?:\.gz)?$")
VERSION_HINT = "version-hint.text"
URI_SCHEMES = {"hive": ("thrift",), "rest": ("http", "https")}


@dataclass(frozen=True)
class Source:
    """A table as this session reaches it.

    Attributes:
        given: what the user typed.
        kind: `hadoop` (a Hadoop-catalog table), `path` (a metadata.json read by path), `hive`, `rest`.
        catalog: the Spark catalog the table is read and maintained through (None for `path`).
        ident: `<namespace>.<table>` inside that catalog, as Spark SQL names it (None for `path`).
        location: the table directory (`hadoop`) or the metadata.json (`path`) URI.
        warehouse: the catalog's warehouse (`hadoop`; optional for hive and rest).
        uri: the metastore or REST endpoint (hive, rest).
    """

    given: str
    kind: str
    catalog: str | None = None
    ident: str | None = None
    location: str | None = None
    warehouse: str | None = None
    uri: str | None = None

    @property
    def copy(self) -> bool:
        """A copy the doctor registered (`icelab.health.scratch` names it `<table>{COPY_SUFFIX}`),
        which shares its files with the table."""
        return (self.ident or self.location or "").rstrip("/`").endswith(COPY_SUFFIX)

    @property
    def name(self) -> str | None:
        """The table's name in Spark SQL (`cat.db.t`); None when it is read by path."""
        return f"{self.catalog}.{self.ident}" if self.catalog and self.ident else None

    @property
    def writable(self) -> bool:
        """Whether maintenance can be committed to it (not to a table read by metadata file)."""
        return self.kind != "path"

    def describe(self) -> str:
        """One line: what the table is and how it is reached."""
        if self.kind == "path":
            return f"{self.location} (read by path, as of that metadata file)"
        if self.kind == "hadoop":
            return f"{self.name} (Hadoop catalog on {self.warehouse})"
        return f"{self.name} ({self.kind} catalog at {self.uri})"

    def catalog_settings(self) -> dict[str, str]:
        """The Spark settings that name this table's catalog, for SQL run elsewhere."""
        if not self.catalog:
            return {}
        prefix = f"spark.sql.catalog.{self.catalog}"
        found = {prefix: "org.apache.iceberg.spark.SparkCatalog", f"{prefix}.type": self.kind}
        if self.warehouse:
            found[f"{prefix}.warehouse"] = self.warehouse
        if self.uri:
            found[f"{prefix}.uri"] = self.uri
        return found


class _Local:
    """The few file-system questions `resolve` asks, for a local path."""

    def exists(self, uri: str) -> bool:
        return os.path.exists(storage.local_path(uri) or uri)

    def is_dir(self, uri: str) -> bool:
        return os.path.isdir(storage.local_path(uri) or uri)

    def names(self, uri: str) -> list[str]:
        path = storage.local_path(uri) or uri
        return sorted(os.listdir(path)) if os.path.isdir(path) else []


class _Hadoop:
    """The same questions through Hadoop's file system (any scheme), once Spark runs."""

    def __init__(self, spark: SparkSession) -> None:
        self.store = storage.Storage(spark)
        self._jvm = spark.sparkContext._jvm
        self._hconf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs(self, uri: str) -> tuple[Any, Any]:
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self._hconf), path

    def exists(self, uri: str) -> bool:
        return self.store.exists(uri)

    def is_dir(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def names(self, uri: str) -> list[str]:
        fs, path = self._fs(uri)
        if not fs.exists(path):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(path))


def quote(part: str) -> str:
    """One part of a Spark SQL name, back-quoted when it is not a plain identifier (`my-table`)."""
    return part if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) else "`" + part.replace("`", "``") + "`"


def _short(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def metadata_version(name: str) -> int | None:
    """The version of a metadata file name (`v3.metadata.json`, `00003-<uuid>.metadata.json`)."""
    match = METADATA_JSON.match(name)
    if not match:
        return None
    return int(match.group(1) or match.group(2))


def is_local(uri: str) -> bool:
    """Whether a URI is on the local file system (checked before Spark starts)."""
    return storage.local_path(uri) is not None


def resolve(
    table: str, catalog: str = "hadoop", uri: str | None = None, warehouse: str | None = None, fs: Any = None
) -> Source:
    """The table the user names, checked as far as can be without a catalog connection.

    Args:
        table: a table directory or metadata.json (catalog hadoop), or `db.table`.
        catalog: hadoop, hive or rest.
        uri: the metastore (thrift://) or REST (http://) endpoint.
        warehouse: a Hadoop catalog's warehouse, when `table` is `db.table`.
        fs: file-system probe (local when None; `_Hadoop(spark)` for remote paths).

    Raises:
        UserError: unknown table path, not an Iceberg table, or options that do not fit together.
    """
    if catalog not in CATALOGS:
        raise UserError(f"unknown catalog '{catalog}' (use one of: {', '.join(CATALOGS)})")
    if catalog != "hadoop":
        return _catalog_source(table, catalog, uri, warehouse)
    if uri:
        raise UserError("--uri is for --catalog hive or rest; a Hadoop table is given by its path")
    if warehouse and "/" not in table:
        if table.count(".") < 1:
            raise UserError(f"table '{table}': with --warehouse give <namespace>.<table>")
        ns, name = table.rsplit(".", 1)
        location = storage.join(storage.to_uri(warehouse), *ns.split("."), name)
        probe = fs or _fs_for(location)
        if probe is None:
            return Source(
                table, "hadoop", ident=table, location=location, warehouse=storage.to_uri(warehouse)
            )
        if not probe.exists(location):
            raise UserError(f"unknown table '{table}' in the Hadoop warehouse {warehouse}: no {location}")
        source = _table_dir(table, location, probe)
        if source.kind != "hadoop":
            raise UserError(f"{location} is not a Hadoop-catalog table (no metadata/{VERSION_HINT})")
        return source
    location = storage.to_uri(table)
    probe = fs or _fs_for(location)
    if probe is None:  # remote: checked once Spark runs
        return Source(table, "unchecked", location=location)
    if not probe.exists(location):
        raise UserError(f"no table at '{table}': the path does not exist")
    if probe.is_dir(location):
        return _table_dir(table, location, probe)
    name = location.rsplit("/", 1)[-1]
    if metadata_version(name) is None and not name.endswith(".metadata.json"):
        raise UserError(
            f"'{table}' is not an Iceberg table: a file that is not a metadata.json "
            "(give the table directory or its metadata/<version>.metadata.json)"
        )
    table_dir = location.rsplit("/", 2)[0]
    hinted = _hinted_metadata(table_dir, probe)
    if hinted == location:  # the current version of a Hadoop table: maintain it through its catalog
        return _hadoop(table, table_dir)
    return Source(table, "path", location=location)


def _fs_for(location: str) -> Any:
    return _Local() if is_local(location) else None


def _hinted_metadata(table_dir: str, probe: Any) -> str | None:
    """The metadata file a Hadoop table's version hint names, if it has one and it exists."""
    metadata = storage.join(table_dir, "metadata")
    hint = storage.join(metadata, VERSION_HINT)
    if not probe.exists(hint):
        return None
    path = storage.local_path(hint)
    if path is None:
        return None  # a remote metadata.json is read by path; a remote directory via its catalog
    version = Path(path).read_text().strip()
    found = storage.join(metadata, f"v{version}.metadata.json")
    return found if probe.exists(found) else None


def _table_dir(given: str, location: str, probe: Any) -> Source:
    names = probe.names(storage.join(location, "metadata"))
    versions = {n: metadata_version(n) for n in names}
    versions = {n: v for n, v in versions.items() if v is not None}
    if not versions:
        names_here = probe.names(location)
        parquet = any(n.endswith(".parquet") or n.startswith(("date=", "part-")) for n in names_here)
        hint = " (it holds Parquet files: a plain Parquet table?)" if parquet else ""
        raise UserError(
            f"'{given}' is not an Iceberg table: no metadata/*.metadata.json under {location}{hint}"
        )
    if VERSION_HINT in names:
        return _hadoop(given, location)
    newest = max(versions, key=lambda n: versions[n])
    return Source(given, "path", location=storage.join(location, "metadata", newest))


def _hadoop(given: str, table_dir: str) -> Source:
    parts = table_dir.rstrip("/").rsplit("/", 2)
    warehouse, ns, name = parts[0], parts[1], parts[2]
    return Source(
        given, "hadoop", ident=f"{quote(ns)}.{quote(name)}", location=table_dir, warehouse=warehouse
    )


def _catalog_source(table: str, catalog: str, uri: str | None, warehouse: str | None) -> Source:
    if not uri:
        example = "thrift://host:9083" if catalog == "hive" else "http://host:8181"
        raise UserError(f"--catalog {catalog} needs --uri (e.g. {example})")
    scheme = urlparse(uri).scheme
    if scheme not in URI_SCHEMES[catalog]:
        raise UserError(
            f"--uri '{uri}' does not fit --catalog {catalog} (use {' or '.join(URI_SCHEMES[catalog])}://)"
        )
    if "/" in table or table.count(".") < 1:
        raise UserError(f"table '{table}': a {catalog} catalog's table is <namespace>.<table>")
    name = f"doctor_{catalog}_{_short(uri)}"
    return Source(table, catalog, catalog=name, ident=table, warehouse=warehouse, uri=uri)


def connect(spark: SparkSession, engine: EngineConfig, source: Source) -> Source:
    """Register the source's catalog in the session (a Hadoop table reuses a catalog the session
    already has on its warehouse, so names agree); remote paths are resolved first.

    Raises:
        UserError: for a remote path that is unknown or not an Iceberg table.
    """
    if source.kind == "unchecked":
        source = resolve(source.given, fs=_Hadoop(spark))
    if source.kind == "path":
        return source
    if source.kind == "hadoop":
        existing = _catalog_on(spark, source.warehouse or "")
        name = existing or f"doctor_{_short(source.warehouse or '')}"
        if existing is None:
            register_iceberg_catalog(spark, name, source.warehouse, _engine(engine, "hadoop", None))
        return dataclasses.replace(source, kind="hadoop", catalog=name)
    register_iceberg_catalog(
        spark, source.catalog or "", source.warehouse, _engine(engine, source.kind, source.uri)
    )
    # Initialize it now: name resolution would swallow a failed initialization (a REST catalog
    # that cannot be reached) and report an unknown namespace of Spark's own catalog instead.
    manager = spark._jsparkSession.sessionState().catalogManager()
    _load(source, lambda: manager.catalog(source.catalog))
    return source


def namespace_tables(
    spark: SparkSession,
    engine: EngineConfig,
    namespace: str,
    catalog: str = "hadoop",
    uri: str | None = None,
    warehouse: str | None = None,
) -> list[str]:
    """Every table of a catalog namespace, as `<namespace>.<table>` names `resolve` takes.

    Raises:
        UserError: no warehouse for a Hadoop catalog, an unreachable catalog, an unknown or empty
            namespace.
    """
    if catalog == "hadoop":
        if not warehouse:
            raise UserError(f"--namespace {namespace}: a Hadoop catalog needs --warehouse")
        source = Source(
            f"namespace {namespace}", "hadoop", ident=namespace, warehouse=storage.to_uri(warehouse)
        )
    else:
        source = _catalog_source(f"{namespace}.t", catalog, uri, warehouse)
    source = connect(spark, engine, source)
    ns = ".".join(quote(p) for p in namespace.split("."))
    rows = _load(source, lambda: spark.sql(f"SHOW TABLES IN {source.catalog}.{ns}").collect())
    names = sorted(f"{namespace}.{r.tableName}" for r in rows)
    if not names:
        where = source.uri or source.warehouse
        raise UserError(f"no table in namespace '{namespace}' of the {catalog} catalog at {where}")
    return names


def load(spark: SparkSession, source: Source) -> Any:
    """The table as an `org.apache.iceberg.Table` (its metadata.json read, no data).

    Raises:
        UserError: unknown table, unreachable catalog, or not an Iceberg table, as one line.
    """
    jvm = spark.sparkContext._jvm
    if source.kind == "path":
        hconf = spark.sparkContext._jsc.hadoopConfiguration()
        tables = jvm.org.apache.iceberg.hadoop.HadoopTables(hconf)
        return _load(source, lambda: tables.load(source.location))
    return _load(source, lambda: load_table(spark, source.name))


def attach(spark: SparkSession, engine: EngineConfig, source: Source) -> tuple[Source, Any]:
    """`connect`, then `load`: the source as the session reaches it, and the loaded table."""
    source = connect(spark, engine, source)
    return source, load(spark, source)


def _engine(engine: EngineConfig, kind: str, uri: str | None) -> EngineConfig:
    return engine.model_copy(update={"catalog_type": kind, "catalog_uri": uri})


def _catalog_on(spark: SparkSession, warehouse: str) -> str | None:
    """A Hadoop catalog the session already has on `warehouse` (a dataset's), so names agree."""
    settings = {r.key: r.value for r in spark.sql("SET").collect() if r.key.startswith("spark.sql.catalog.")}
    for key, value in settings.items():
        if key.endswith(".warehouse") and value.rstrip("/") == warehouse.rstrip("/"):
            name = key[len("spark.sql.catalog.") : -len(".warehouse")]
            if "." not in name and settings.get(f"spark.sql.catalog.{name}.type") == "hadoop":
                return name
    return None


def root_cause(exc: BaseException) -> tuple[str, str]:
    """The innermost Java exception's class and message (Python's own when not from the JVM)."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return type(exc).__name__, str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    seen = java
    while seen.getCause() is not None and seen.getCause() != seen:
        seen = seen.getCause()
    message = seen.getMessage() or java.getMessage() or ""
    return str(seen.getClass().getName()), str(message).strip().splitlines()[0] if message else ""


UNREACHABLE = ("ConnectException", "TTransportException", "NoRouteToHost", "UnknownHost", "SocketTimeout")
MISSING = ("NoSuchTableException", "NoSuchNamespaceException", "NoSuchIcebergTableException")


def _load(source: Source, load: Callable[[], Any]) -> Any:
    try:
        return load()
    except (Py4JJavaError, PySparkException) as exc:
        raise _explain(source, exc) from None


def current_metadata_file(source: Source) -> str | None:
    """The metadata file a table read by path, or a local Hadoop table's version hint, names."""
    if source.kind == "path":
        return source.location
    if source.kind == "hadoop" and source.location and is_local(source.location):
        return _hinted_metadata(source.location, _Local()) or storage.join(source.location, "metadata")
    return None


def _explain(source: Source, exc: BaseException) -> UserError:
    """Why a table could not be loaded: unknown, unreachable, broken (`BrokenTable`), or else."""
    cls, message = root_cause(exc)
    top = str(getattr(getattr(exc, "java_exception", None), "getClass", lambda: None)() or "")
    text = f"{cls} {message} {top}"
    unreachable = any(word in text for word in UNREACHABLE) or "connect" in text.lower()
    if not any(word in text for word in MISSING) and not (source.kind in ("hive", "rest") and unreachable):
        broken = diagnose_failure(exc, source.describe(), current_metadata_file(source))
        if broken is not None:
            return broken
    return UserError(_message(source, cls, message, text))


def _message(source: Source, cls: str, message: str, text: str) -> str:
    if any(word in text for word in MISSING):
        where = source.uri or source.warehouse or source.location
        return f"unknown table '{source.ident or source.given}' in the {source.kind} catalog at {where}"
    unreachable = any(word in text for word in UNREACHABLE) or "connect" in text.lower()
    if source.kind in ("hive", "rest") and unreachable:
        return f"cannot reach the {source.kind} catalog at {source.uri}: {message or cls}"
    return f"cannot read '{source.given}' as an Iceberg table: {cls.rsplit('.', 1)[-1]}: {message}"


def metadata_table(
    spark: SparkSession, source: Source, kind: str, snapshot_id: int | None = None
) -> DataFrame:
    """One of the table's metadata tables (`manifests`, `entries`, `snapshots`, ...): no data read.

    Args:
        snapshot_id: read `manifests`, `entries` or `files` at this snapshot (None: the current
            one, which a concurrent writer may move between two reads).
    """
    reader = spark.read
    if snapshot_id is not None:
        reader = reader.option("snapshot-id", str(snapshot_id))
    if source.name:
        return reader.table(f"{source.name}.{kind}")
    return reader.format("iceberg").load(f"{source.location}#{kind}")
