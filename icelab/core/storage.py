"""Paths and files on any Hadoop file system (local, HDFS, S3A, ABFS) through Spark's JVM.

A path without a scheme is a local path and becomes a `file:` URI; anything on a cluster
is given as a URI (hdfs://, s3a://, abfss://) in config.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pyspark.sql import SparkSession

from icelab.core import javac
from icelab.core.errors import UserError


def to_uri(path: str) -> str:
    """Return a fully qualified URI; scheme-less paths are local and made absolute."""
    if urlparse(path).scheme and len(urlparse(path).scheme) > 1:  # "C:" is not a scheme
        return path.rstrip("/")
    return "file://" + os.path.abspath(path)


def join(uri: str, *parts: str) -> str:
    """Join URI path segments with '/'."""
    return "/".join([uri.rstrip("/"), *(p.strip("/") for p in parts)])


def local_path(uri: str) -> str | None:
    """The local file system path of a `file:` URI, else None."""
    parsed = urlparse(uri)
    return parsed.path if parsed.scheme == "file" else None


# Object stores this process has open (icelab.core.object_store), by bucket (`s3a://bucket`):
# who each is (its RGW state directory, or endpoint and bucket), since two stores can both hold
# a bucket of one name. A registered bucket is also one DuckDB holds credentials for.
_stores: dict[str, str] = {}


def _bucket(uri: str) -> str:
    parsed = urlparse(uri)
    return f"{parsed.scheme}://{parsed.netloc}"


def register_store(uri: str, identity: str) -> None:
    """Note that the bucket of `uri` is reached through an open store known as `identity`."""
    _stores[_bucket(uri)] = identity


def forget_store(uri: str) -> None:
    """The store holding `uri`'s bucket is closed."""
    _stores.pop(_bucket(uri), None)


def store_of(uri: str) -> str | None:
    """The identity of the open store holding `uri`, None when it is not on one."""
    return _stores.get(_bucket(uri))


def duckdb_path(uri: str) -> str | None:
    """Where DuckDB reads `uri`: the local path of a `file:` URI, `s3://` for a bucket of an open
    store (its httpfs secret is set), None where DuckDB cannot reach it."""
    path = local_path(uri)
    if path is not None:
        return path
    if urlparse(uri).scheme == "s3a" and store_of(uri) is not None:
        return "s3://" + uri.removeprefix("s3a://")
    return None


def check_local_dir(uri: str, key: str, min_free_gb: float) -> None:
    """Fail with one line when a local directory is a file, cannot be written or lacks space.

    Remote URIs are checked by their file system when Spark first writes there.

    Args:
        uri: the directory, as `to_uri` gives it.
        key: the setting it came from (`paths.data_dir`), named in the message.
        min_free_gb: least free space, in GB (10^9 bytes), on the directory's disk.
    """
    path = local_path(uri)
    if path is None:
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"{key}='{path}' is a file, not a directory; give a directory")
    probe = os.path.join(path, f".icelab-probe-{uuid.uuid4().hex}")
    try:
        os.makedirs(path, exist_ok=True)
        with open(probe, "w") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        # A full disk fails the probe before the free-space threshold is reached: say which.
        if exc.errno == errno.ENOSPC:
            why = "is on a full disk; free some space or give another directory"
        else:
            why = f"is not writable ({exc.strerror or exc}); give a writable directory"
        raise UserError(f"{key}='{path}' {why}") from None
    free_gb = shutil.disk_usage(path).free / 1e9
    if free_gb < min_free_gb:
        raise UserError(
            f"{key}='{path}' has {free_gb:.2f} GB free, below paths.min_free_gb={min_free_gb:g}; "
            "free some space, give another directory or lower paths.min_free_gb"
        )


@dataclass(frozen=True)
class FileStat:
    """One file under a listed directory."""

    path: str
    size: int


LIST_FILES = Path(__file__).with_name("ListFiles.java")


class Storage:
    """Hadoop FileSystem operations for one Spark session."""

    def __init__(self, spark: SparkSession) -> None:
        self._jvm = spark.sparkContext._jvm
        self._gateway = spark.sparkContext._gateway
        self._hconf = spark.sparkContext._jsc.hadoopConfiguration()

    def _fs_path(self, uri: str):  # noqa: ANN202 (py4j objects)
        path = self._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self._hconf), path

    def exists(self, uri: str) -> bool:
        """Whether a file or directory exists."""
        fs, path = self._fs_path(uri)
        return bool(fs.exists(path))

    def size(self, uri: str) -> int | None:
        """A file's length in bytes; None when it does not exist."""
        fs, path = self._fs_path(uri)
        if not fs.exists(path):
            return None
        return int(fs.getFileStatus(path).getLen())

    def delete(self, uri: str) -> None:
        """Delete recursively; missing is fine."""
        fs, path = self._fs_path(uri)
        if fs.exists(path):
            fs.delete(path, True)

    def mkdirs(self, uri: str) -> None:
        """Create a directory and its parents."""
        fs, path = self._fs_path(uri)
        fs.mkdirs(path)

    def read_text(self, uri: str) -> str:
        """Read a whole (small) text file."""
        fs, path = self._fs_path(uri)
        stream = fs.open(path)
        try:
            reader = self._jvm.java.io.BufferedReader(self._jvm.java.io.InputStreamReader(stream, "UTF-8"))
            lines = []
            line = reader.readLine()
            while line is not None:
                lines.append(line)
                line = reader.readLine()
            return "\n".join(lines)
        finally:
            stream.close()

    def write_text_atomic(self, uri: str, text: str) -> None:
        """Write to a temporary sibling, then rename into place.

        Readers see the old file, no file, or the whole new file: never half of one.
        """
        fs, path = self._fs_path(uri)
        tmp = self._jvm.org.apache.hadoop.fs.Path(f"{uri}.tmp-{uuid.uuid4().hex}")
        out = fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if fs.exists(path):
            fs.delete(path, False)
        if not fs.rename(tmp, path):
            fs.delete(tmp, False)
            raise OSError(f"could not rename {tmp} to {uri}")

    def list_files(self, uri: str, suffix: str = "") -> list[FileStat]:
        """All files below a directory (recursive) whose names end with `suffix`."""
        fs, path = self._fs_path(uri)
        if not fs.exists(path):
            return []
        lines = self._lister(fs)(fs, path, suffix)
        return [FileStat(name, int(size)) for name, size in (line.split("\t") for line in lines.splitlines())]

    def _lister(self, fs: Any) -> Callable[..., str]:
        """`ListFiles.list`, loaded beside the file system's classes."""
        classes = javac.compiled([LIST_FILES], "icelab.core", "file lister", None)
        cls = javac.load_class(self._gateway, classes, fs, "icelab.core.ListFiles")
        return javac.static_method(
            self._gateway,
            cls,
            "list",
            "org.apache.hadoop.fs.FileSystem",
            "org.apache.hadoop.fs.Path",
            "java.lang.String",
        )


# What S3A's errors say, first line of the Java exception: refused keys, or no store there.
_S3A_REFUSED = ("AccessDeniedException", "Status Code: 403", "InvalidAccessKeyId", "SignatureDoesNotMatch")
_S3A_UNREACHABLE = ("UnknownHostException", "ConnectException", "Connection refused", "ConnectTimeout")


def s3a_error(text: str, uri: str, endpoint: str) -> str | None:
    """One line for an S3A failure that is the user's to fix (keys, endpoint); None otherwise."""
    if any(mark in text for mark in _S3A_REFUSED):
        return f"the object store at {endpoint} refused the credentials for {uri} (403 AccessDenied)"
    if any(mark in text for mark in _S3A_UNREACHABLE):
        return f"the object store at {endpoint} is unreachable from Spark ({uri})"
    return None


def check_store(spark: SparkSession, uri: str, endpoint: str) -> None:
    """Reach `uri` once through Spark's S3A, before any work: refused keys or an endpoint Spark
    cannot reach become one line instead of a Java stack trace.

    Raises:
        UserError: with that line.
    """
    from py4j.protocol import Py4JJavaError

    # Hadoop caches one S3A instance per bucket for the JVM's life, bound to the endpoint it was
    # made with; a multirun's earlier job may have made one for a store that is gone.
    spark.sparkContext._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
    try:
        Storage(spark).exists(uri)
    except Py4JJavaError as exc:
        line = s3a_error(str(exc), uri, endpoint)
        if line is None:
            raise
        raise UserError(line) from None


# S3A's request counters (Hadoop's IOStatistics on the bucket's FileSystem) behind the results'
# request columns; each column sums its counters. A GET is counted when its stream closes.
S3A_REQUESTS = {
    "s3_requests": ("store_io_request",),  # every request S3A sent to the store
    "s3_list_requests": ("object_list_request", "object_continue_list_request"),
    "s3_head_requests": ("object_metadata_request",),
    "s3_get_requests": ("action_http_get_request",),
}
# S3A's retry counters (store_io_retry, store_io_throttled) stayed 0 while the SDK retried 503
# SlowDowns here, but `store_io_request` counts every attempt and the operation counters one per
# operation: the attempts beyond those are the retries (equal to the SlowDowns the delay proxy
# dealt, measurement by measurement, in a smoke run at 5%).
RETRIES = "s3_retries"
_OPERATIONS = ("s3_list_requests", "s3_head_requests", "s3_get_requests")
_COUNTER = re.compile(r"\(([\w.]+)=(\d+)\)")
# S3A's request durations (milliseconds): a maximum and a mean (samples, sum) per request kind,
# successes and failures apart (`action_http_get_request.failures.max`).
_MAXIMUM = re.compile(r"\(((?:action_http|object)_[\w.]+?)\.max=(-?\d+)\)")
_MEAN = re.compile(r"\(((?:action_http|object)_[\w.]+?)\.mean=\(samples=(\d+), sum=(-?\d+)")
REQUEST_MS, LONGEST_MS = "s3_request_ms", "s3_longest_ms"


class RequestCounts:
    """The requests Spark's S3A client has sent to one bucket (all of this JVM's users of it:
    Spark's file listing and reads, Iceberg's HadoopFileIO), read from S3A's own counters."""

    def __init__(self, spark: SparkSession, uri: str) -> None:
        jvm, hadoop_conf = spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()
        self._fs = jvm.org.apache.hadoop.fs.Path(uri).getFileSystem(hadoop_conf)
        self._to_string = jvm.org.apache.hadoop.fs.statistics.IOStatisticsLogging.ioStatisticsToString

    @classmethod
    def of(cls, spark: SparkSession, uri: str | None) -> RequestCounts | None:
        """Counts for the bucket of an `s3a://` URI; None elsewhere (no requests to count)."""
        return cls(spark, uri) if uri and urlparse(uri).scheme == "s3a" else None

    def snapshot(self) -> dict[str, int]:
        """Requests so far, by column, the milliseconds they took (summed) and the longest one
        (one call into the JVM)."""
        whole = str(self._to_string(self._fs.getIOStatistics()))
        text, _, rest = whole.partition("gauges=")
        counters = {name: int(value) for name, value in _COUNTER.findall(text)}
        cols = {col: sum(counters.get(name, 0) for name in names) for col, names in S3A_REQUESTS.items()}
        longest = max((int(v) for _, v in _MAXIMUM.findall(rest)), default=0)
        spent = sum(int(total) for _, _, total in _MEAN.findall(rest))
        return cols | {
            RETRIES: cols["s3_requests"] - sum(cols[op] for op in _OPERATIONS),
            REQUEST_MS: spent,
            LONGEST_MS: longest,
        }

    def since(self, before: dict[str, int]) -> dict[str, int | None]:
        """Requests sent since the snapshot `before`, by column, and the retries among them; the
        milliseconds they took, and the longest one when it is the session's longest so far
        (S3A keeps only the maximum since it started: None when it did not rise)."""
        now = self.snapshot()
        sent: dict[str, int | None] = {col: now[col] - before.get(col, 0) for col in now}
        longest = now[LONGEST_MS] if now[LONGEST_MS] > before.get(LONGEST_MS, 0) else None
        return sent | {RETRIES: max(0, sent[RETRIES] or 0), LONGEST_MS: longest}
