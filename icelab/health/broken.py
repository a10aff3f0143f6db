"""A broken table: a metadata file, manifest list or manifest that is missing or cannot be read.

That is its own outcome, not bad input and not advice: the doctor stops before judging or
writing anything and names the file in one line (`BrokenTable`). Missing files are found before
any Spark job runs (the current manifest list and manifests against one listing of the metadata
directory), so no task fails and Spark logs no stack trace; a file that is present but unreadable
(a corrupt metadata.json, a cut Avro file) is recognized by the root cause Iceberg raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException

from icelab.core.errors import UserError

EXIT_BROKEN = 3  # beside 0 healthy, 1 action advised, 2 bad input
# Root causes that mean a file of the table is missing or unreadable (class name -> what it says).
CAUSES = {
    "NotFoundException": "is missing",
    "FileNotFoundException": "is missing",
    "ChecksumException": "fails its checksum (its .crc file disagrees: the file was changed or cut)",
    "JsonParseException": "is not valid JSON",
    "JsonEOFException": "is cut short (not valid JSON)",
    "JsonMappingException": "is not a valid Iceberg metadata file",
    "InvalidAvroMagicException": "is not an Avro file",
    "AvroRuntimeException": "is not a readable Avro file",
    "EOFException": "is cut short",
}
FILE = re.compile(r"((?:[a-z][a-z0-9+.-]*:)?/[^\s'\"]+?\.(?:metadata\.json(?:\.gz)?|avro|puffin))\b")


class BrokenTable(UserError):
    """A file the table's current state needs is missing or unreadable."""

    def __init__(self, table: str, file: str, problem: str) -> None:
        self.table, self.file, self.problem = table, file, problem
        super().__init__(f"broken table {table}: {kind(file)} {file} {problem}; nothing was written to it")


def kind(path: str) -> str:
    """What a metadata file is, from its name as Iceberg writes it."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if ".metadata.json" in name:
        return "metadata file"
    if name.startswith("snap-") and name.endswith(".avro"):
        return "manifest list"
    if name.endswith(".avro"):
        return "manifest"
    return "file"


def _chain(exc: BaseException) -> Iterator[tuple[str, str]]:
    """(simple class name, message) of every Java exception in the chain (Python's own if none)."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        yield type(exc).__name__, str(exc)
        return
    seen = 0
    while java is not None and seen < 20:
        yield str(java.getClass().getSimpleName()), str(java.getMessage() or "")
        cause = java.getCause()
        java = None if cause is None or cause == java else cause
        seen += 1


def diagnose_failure(exc: BaseException, table: str, fallback: str | None) -> BrokenTable | None:
    """The broken-table outcome a failed read stands for, or None when it is not a file's fault.

    Args:
        fallback: the file to name when no message names one (a JSON error names no path).
    """
    causes = list(_chain(exc))
    problem = None
    for cls, message in reversed(causes):  # the innermost cause says what is wrong
        if cls in CAUSES:
            problem = CAUSES[cls]
            detail = message.strip().splitlines()[0] if message.strip() else ""
            if cls.startswith("Json") and detail:
                problem = f"{problem} ({detail})"
            break
    if problem is None:
        return None
    for _, message in causes:
        found = FILE.search(message)
        if found:
            return BrokenTable(table, found.group(1), problem)
    return BrokenTable(table, fallback or "(a metadata file)", problem)


@contextmanager
def guard(table: str, fallback: Callable[[], str | None] = lambda: None) -> Iterator[None]:
    """Turn a read that fails on a missing or unreadable file into `BrokenTable`."""
    try:
        yield
    except (Py4JJavaError, PySparkException) as exc:
        broken = diagnose_failure(exc, table, _safe(fallback))
        if broken is None:
            raise
        raise broken from None


def _safe(fn: Callable[[], str | None]) -> str | None:
    try:
        return fn()
    except Exception:  # noqa: BLE001 (only a name for the message; the failure is reported anyway)
        return None


def first_missing(paths: Iterable[str], present: set[str], exists: Callable[[str], Any]) -> str | None:
    """The first of `paths` that does not exist: by name in `present` (one listing of the metadata
    directory), else asked of the file system (a file kept elsewhere)."""
    for path in paths:
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if name in present:
            continue
        if not exists(path):
            return path
    return None
