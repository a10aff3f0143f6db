"""Delete files named as what they are, and what to do about them.

Merge-on-read writes delete files instead of rewriting data: position deletes (content 1: a data
file and row positions, in Parquet/Avro/ORC), deletion vectors (format v3: also content 1, but a
bitmap per data file in a Puffin file, `file_format` PUFFIN; Iceberg keeps at most one per data
file) and equality deletes (content 2: rows matching column values). Every read merges them with
the data until the data files are rewritten, and planning opens the delete manifests that list
them.

What helps: `rewrite_position_delete_files` compacts position delete files (and drops those whose
data files are gone) without touching data; deletion vectors need no such step, since a writer
already merges them into one per data file; `rewrite_data_files` with `delete-file-threshold`
rewrites the data files that have deletes, applying them, which removes every kind.
"""

from __future__ import annotations

from typing import Any

from icelab.core.units import plural, size
from icelab.health.finding import Finding


def kinds_text(d: dict[str, Any]) -> str:
    """`3 position delete files, 6 deletion vectors, 0 equality delete files`."""
    return (
        f"{d.get('position_delete_files', 0):,} position delete files, "
        f"{d.get('deletion_vectors', 0):,} deletion vectors, "
        f"{d.get('equality_delete_files', 0):,} equality delete files"
    )


def delete_advice(d: dict[str, Any], catalog: str, ident: str) -> list[Finding]:
    """The note on a table's delete files and the calls that clear them; none without deletes.

    Args:
        d: `Health.deletes`.
    """
    if not d.get("delete_files"):
        return []
    note = (
        f"delete files: {kinds_text(d)} with {d['delete_records']:,} deleted rows "
        f"({size(d['delete_bytes'], 'kB')}), "
        f"in {plural(d['partitions_with_deletes'], 'partition')} and "
        f"{plural(d['delete_manifests'], 'delete manifest')}; every "
        "read merges them with the data until the data files are rewritten; not run by --apply"
    )
    found = [Finding(note)]
    if d.get("position_delete_files"):
        found.append(
            Finding(
                "",
                "rewrite_position_deletes",
                f"CALL {catalog}.system.rewrite_position_delete_files(table => '{ident}')",
                f"compact the {d['position_delete_files']:,} position delete files per partition and drop "
                "those of removed data files; data files untouched (rewrites delete files: review first)",
            )
        )
    found.append(
        Finding(
            "",
            "rewrite_deletes",
            f"CALL {catalog}.system.rewrite_data_files(table => '{ident}', "
            "options => map('delete-file-threshold', '1'))",
            "compaction: rewrite the data files that have deletes, applying them, so reads stop "
            "merging delete files (rewrites data: review first)",
        )
    )
    return found
