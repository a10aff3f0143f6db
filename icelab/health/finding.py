"""A finding beside the manifest layout (delete files, orphaned metadata): a note for the report
and, where a call helps, the SQL to review. `--apply` never runs these: each rewrites or deletes
files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """A note, and the statement to review (`action`, `sql`, `why`) when one helps."""

    note: str
    action: str | None = None
    sql: str | None = None
    why: str = ""
