"""Read a dataset's files once before measuring, so that no variant alone pays a cold disk.

Without it the first table to execute a query reads its files from disk and every later
variant over the same files reads them from the operating system's cache: with few executions
per case that order effect would be measured as a difference between setups.
"""

from __future__ import annotations

import os
import time

from tqdm import tqdm

from icelab.core import storage

CHUNK = 8 * 1024 * 1024


def warm(uri: str, progress: bool = True) -> dict[str, float] | None:
    """Read every file under a local dataset directory once.

    Returns:
        files, bytes and seconds read, or None for remote storage (nothing to warm locally).
    """
    root = storage.local_path(uri)
    if root is None:
        return None
    paths = [os.path.join(d, f) for d, _, files in os.walk(root) for f in files]
    t0, total = time.perf_counter(), 0
    for path in tqdm(paths, desc="page cache", unit="file", disable=not progress):
        with open(path, "rb", buffering=0) as fh:
            while chunk := fh.read(CHUNK):
                total += len(chunk)
    return {"files": len(paths), "bytes": total, "seconds": round(time.perf_counter() - t0, 1)}
