"""Orphaned metadata: manifests and manifest lists under the table's metadata directory that no
snapshot in its metadata references, with the bytes they hold and the call that removes them.

They are left by an expiry that kept the expired snapshots' files (file cleanup off, or an engine
whose expiry only edits the metadata), by a commit that failed after writing its manifests, or by
a writer killed mid-commit. Nothing reads them, but they hold storage, and every listing of the
directory walks them. `remove_orphan_files` deletes them, with a caveat: it cannot tell an orphan
from a file a commit in flight has just written, so it only deletes files older than its
`older_than` (by default three days before the call).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from icelab.core.units import plural, size
from icelab.health.finding import Finding

# remove_orphan_files's default older_than: files newer than this are left alone.
REMOVE_ORPHANS_DEFAULT_AGE_MS = 3 * 24 * 3600 * 1000


def name_of(path: str) -> str:
    return str(path).rstrip("/").rsplit("/", 1)[-1]


def orphaned(
    listing: pd.DataFrame, manifest_lists: set[str], manifests: set[str], now_ms: int
) -> dict[str, Any]:
    """Orphaned manifest lists and manifests among the `.avro` files of the metadata directory.

    Args:
        listing: the metadata directory's files: name, path, size, modified_ms.
        manifest_lists: names of the manifest lists of every snapshot in the metadata.
        manifests: names of the manifests any of those snapshots references (all_manifests).
    """
    avro = listing[listing.name.astype(str).str.endswith(".avro")]
    orphans = avro[~avro.name.isin(manifest_lists | manifests)]
    is_list = orphans.name.astype(str).str.startswith("snap-")
    lists, mans = orphans[is_list], orphans[~is_list]
    cutoff = now_ms - REMOVE_ORPHANS_DEFAULT_AGE_MS
    return {
        "files": len(orphans),
        "bytes": int(orphans["size"].sum()),
        "manifests": len(mans),
        "manifest_bytes": int(mans["size"].sum()),
        "manifest_lists": len(lists),
        "manifest_list_bytes": int(lists["size"].sum()),
        "older_than_default": int((orphans.modified_ms < cutoff).sum()),
        "newest_age_s": round((now_ms - int(orphans.modified_ms.max())) / 1000, 1) if len(orphans) else None,
        "names": sorted(orphans.name)[:20],
    }


def _dir(uri: str) -> str:
    """A directory URI in one form: no scheme's `file:` spelling differences, no trailing slash."""
    text = str(uri).rstrip("/")
    for prefix in ("file:///", "file:/"):
        if text.startswith(prefix):
            return "/" + text[len(prefix) :].lstrip("/")
    return text


def shared_location(
    location: str, metadata_file: str | None, metadata_path: str | None, copy: bool
) -> str | None:
    """Why this table's metadata directory may hold another table's files (None when it does not):
    a copy the doctor registered, or a table whose current metadata file lies outside its
    location's metadata directory (`register_table` keeps the original's location). There an
    orphan listing would name the original's live files, and remove_orphan_files delete them."""
    if copy:
        return "a scratch copy of another table: the files its snapshots reference are that table's"
    if metadata_file and not metadata_path:
        expected = _dir(f"{location}/metadata")
        if _dir(metadata_file.rsplit("/", 1)[0]) != expected:
            return (
                f"its metadata file is outside {location}/metadata: a registered copy shares another "
                "table's location"
            )
    return None


def orphans_text(found: dict[str, Any]) -> str:
    """`none ...`, or `6 manifests (45.1 kB), 6 manifest lists (27.5 kB) ... no snapshot references`."""
    if found.get("shared"):
        return f"not counted: {found['shared']}"
    if not found.get("files"):
        return "none (every manifest and manifest list under metadata/ is referenced)"
    mans, lists = size(found["manifest_bytes"], "kB"), size(found["manifest_list_bytes"], "kB")
    return (
        f"{plural(found['manifests'], 'manifest')} ({mans}), "
        f"{plural(found['manifest_lists'], 'manifest list')} ({lists}) "
        "under metadata/ that no snapshot references"
    )


def orphan_advice(found: dict[str, Any], catalog: str, ident: str) -> list[Finding]:
    """The note and the `remove_orphan_files` call for orphaned metadata; none without orphans,
    and only a note (no call) where the location is shared with another table."""
    if found.get("shared"):
        note = (
            f"orphans not advised: {found['shared']}; remove_orphan_files on it would list, and delete, "
            "files the other table still uses"
        )
        return [Finding(note, None, None, "")]
    if not found.get("files"):
        return []
    n, old = found["files"], found["older_than_default"]
    note = (
        f"orphaned metadata: {orphans_text(found)}; remove_orphan_files deletes only files older than "
        "its older_than (by default 3 days before the call, so that a commit in flight keeps its files): "
        f"{old} of these {n} are that old now; an older_than closer to now also deletes the files of any "
        "write running then; it deletes orphaned data files too (dry_run => true lists them first); "
        "not run by --apply"
    )
    why = (
        f"delete the {n} orphaned metadata files ({size(found['bytes'], 'kB')}) once older than 3 days, "
        "and any orphaned data file (deletes files: review first)"
    )
    return [
        Finding(note, "remove_orphans", f"CALL {catalog}.system.remove_orphan_files(table => '{ident}')", why)
    ]
