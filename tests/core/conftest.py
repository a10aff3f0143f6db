"""Real small file systems for the disk errors: a full disk is a full tmpfs, not a mock."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(point: Path, *options: str) -> Iterator[Path]:
    """A 1 MB tmpfs with extra mount options ("ro") mounted at `point` (made here) until exit.

    Needs root, which CI has; elsewhere it skips with that reason (pytest.skip's exception). A
    failing mount as root fails rather than skipping.
    """
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    point.mkdir()
    opts = ",".join(["size=1m", *options])
    subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(point)], check=True)
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=True)


def fill(point: Path) -> Path:
    """`point` (a mounted tmpfs) filled with zeros until the kernel says ENOSPC."""
    try:
        with open(point / "fill", "wb") as fh:
            while True:
                fh.write(bytes(1 << 16))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    assert shutil.disk_usage(point).free == 0
    return point


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a 1 MB tmpfs with extra mount options ("ro"); each is unmounted after the test."""
    with contextlib.ExitStack() as mounts:
        count = itertools.count()
        yield lambda *options: mounts.enter_context(mounted_tmpfs(tmp_path / f"tmpfs{next(count)}", *options))


@pytest.fixture
def full_disk(tmpfs: Callable[..., Path]) -> Path:
    """A mounted tmpfs filled with zeros until the kernel says ENOSPC."""
    return fill(tmpfs())
