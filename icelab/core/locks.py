"""Locks between icelab processes on one machine, so concurrent runs never trip over each other.

A dataset is read under a shared lock and built (or rebuilt) under an exclusive one; a profile
copy is made under an exclusive lock of its own. Two runs started at once therefore both
succeed: the second waits, saying once what it waits for and who holds it, then reuses what the
first built. The locks are `flock` locks on files in a local directory (`ICELAB_LOCK_DIR`,
default `<tmp>/icelab-locks-<uid>`), keyed by the dataset's URI: a killed holder loses its lock
with its process, so nothing is ever left locked. Runs on other machines sharing HDFS or S3 are
not covered (coordinate those outside icelab).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from icelab.core import storage
from icelab.core.errors import UserError

# How long to wait for a lock before giving up, and what this process is (for the holders'
# notes); both set by icelab.bench.context from the run's config.
wait_s: float = 3600.0
owner: str = "icelab"
_held: dict[str, tuple[int, int]] = {}  # key -> (descriptor, LOCK_SH or LOCK_EX)


def lock_dir() -> Path:
    """Where the lock files live (created on first use)."""
    default = Path(tempfile.gettempdir()) / f"icelab-locks-{os.getuid()}"
    path = Path(os.environ.get("ICELAB_LOCK_DIR") or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def key_of(uri: str) -> str:
    """The lock key of a data location: a local path resolved (symlinks and all), a URI on an
    open object store prefixed by the store's identity (`s3a://icelab/data` names one place per
    store), else the URI."""
    path = storage.local_path(uri)
    if path is not None:
        return os.path.realpath(path)
    store = storage.store_of(uri)
    return f"{store} {uri}" if store else uri


def _stem(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _holder_file(key: str, pid: int) -> Path:
    return lock_dir() / f"{_stem(key)}.{pid}.json"


def holders(key: str) -> list[str]:
    """Who holds `key`, as far as the live holders' notes say (`pid 123 (exclusive): run.py ...`)."""
    found = []
    for note in sorted(lock_dir().glob(f"{_stem(key)}.*.json")):
        try:
            info = json.loads(note.read_text())
            os.kill(int(info["pid"]), 0)
        except (OSError, ValueError, KeyError):
            continue  # a dead holder's note: its lock went with it
        if info["pid"] != os.getpid():
            found.append(f"pid {info['pid']} ({info['mode']}, since {info['since']}): {info['command']}")
    return found


def _try(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def acquire(key: str, what: str, exclusive: bool, unless: Callable[[], bool] | None = None) -> bool:
    """Hold `key` shared or exclusive (converting this process's own lock if it has one).

    Waits up to `wait_s` seconds when another process holds it, saying so once on stderr; with
    `unless`, stops waiting as soon as `unless()` is true (what the lock was wanted for was done
    by the holder) and returns False, holding nothing. Returns True once held.

    Raises:
        UserError: when the wait runs out (or `wait_s` is 0), naming the holders.
    """
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    fd, held = _held.get(key, (None, None))
    if held == mode:
        return True
    if fd is None:
        fd = os.open(lock_dir() / f"{_stem(key)}.lock", os.O_CREAT | os.O_RDWR, 0o644)
    if not _try(fd, mode):
        # A failed conversion drops the lock this process had: it is re-taken below.
        _held.pop(key, None)
        who = "; ".join(holders(key)) or "another icelab process"
        kind = "exclusive" if exclusive else "shared"
        if wait_s <= 0:
            os.close(fd)
            raise UserError(f"{what} is in use by {who}; not waiting (lock_wait_s=0)")
        print(
            f"icelab: waiting for {what} ({kind} use): in use by {who}; "
            f"waiting up to {wait_s:.0f} s (lock_wait_s)",
            file=sys.stderr,
            flush=True,
        )
        deadline = time.monotonic() + wait_s
        while not _try(fd, mode):
            if unless is not None and unless():
                os.close(fd)
                return False
            if time.monotonic() > deadline:
                os.close(fd)
                raise UserError(f"gave up after {wait_s:.0f} s waiting for {what}: still in use by {who}")
            time.sleep(0.5)
    _held[key] = (fd, mode)
    note = {
        "pid": os.getpid(),
        "mode": "exclusive" if exclusive else "shared",
        "since": time.strftime("%H:%M:%S"),
        "command": owner,
    }
    _holder_file(key, os.getpid()).write_text(json.dumps(note))
    return True


def release(key: str) -> None:
    """Let go of `key` (no-op when not held)."""
    fd, _ = _held.pop(key, (None, None))
    if fd is not None:
        os.close(fd)
        _holder_file(key, os.getpid()).unlink(missing_ok=True)


@contextmanager
def exclusive(key: str, what: str) -> Iterator[None]:
    """Hold `key` exclusively for the block."""
    acquire(key, what, exclusive=True)
    try:
        yield
    finally:
        release(key)
