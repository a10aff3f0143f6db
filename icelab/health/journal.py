"""The journal of `--apply`: what the doctor is about to change on a table, and the table
properties as they were, written (and fsynced) before the first change and removed after the last.

A process killed mid-apply (kill -9, a lost machine) runs no `finally`: the table keeps the
rewrite's small manifest target, and a later `--apply` would take it for the table's own. So
every doctor run on a table first looks for an unfinished journal of it, says so in one line, and
puts those properties back before anything else. Restoring sets a property to its recorded value
(or unsets it), so running it twice is harmless. A table is known by where it is (its location, or
its catalog's URI and name), not by the name a session's catalog gives it, which differs between
sessions.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.core import failpoints

DIRECTORY = "doctor-journal"


def key(table: str) -> str:
    """The journal file name of a table (`identity`)."""
    return hashlib.sha256(table.encode()).hexdigest()[:16] + ".json"


def identity(location: str | None, kind: str, uri: str | None, ident: str | None) -> str:
    """What a table is known by in a journal: its location, else its catalog's kind, URI and name."""
    return location.rstrip("/") if location else f"{kind}:{uri}:{ident}"


def _fsynced(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def begin(directory: Path, table: str, restore: dict[str, str | None], changes: list[str]) -> Path:
    """Record, before the first change, the table, the changes to come and the properties to put
    back (None: unset); the journal's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / key(table)
    record = {
        "table": table,
        "pid": os.getpid(),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "changes": changes,
        "restore": restore,
    }
    _fsynced(path, json.dumps(record, indent=1))
    failpoints.point("doctor.journal")
    return path


def finish(path: Path) -> None:
    """The apply ended (its restoring statements ran): the journal goes."""
    path.unlink(missing_ok=True)


def recover(directory: Path, table: str, put_back: Callable[[str, str | None], Any]) -> dict[str, Any] | None:
    """Finish what an earlier `--apply` on `table` left: put back each property its unfinished
    journal recorded (through `put_back(property, value or None)`), say so in one line on
    stderr, then remove the journal; None when there is none."""
    path = directory / key(table)
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    shown = ", ".join(f"{k}={'unset' if v is None else v}" for k, v in record["restore"].items())
    print(
        f"icelab: an earlier --apply on {table} (pid {record['pid']}, {record['started_utc']}) did not "
        f"finish; putting back what it changed first: {shown}",
        file=sys.stderr,
    )
    for prop, value in record["restore"].items():
        put_back(prop, value)
    finish(path)
    return record
