"""Real small file systems for the disk errors: a full disk is a full tmpfs, not a mock."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a 1 MB tmpfs with extra mount options ("ro"); each is unmounted after the test.

    Needs root, which CI has; elsewhere the test is skipped with that reason. A failing mount
    as root fails the test rather than skipping it.
    """
    mounted: list[Path] = []

    def mount(*options: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        point = tmp_path / f"tmpfs{len(mounted)}"
        point.mkdir()
        opts = ",".join(["size=1m", *options])
        subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(point)], check=True)
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", str(point)], check=True)


@pytest.fixture
def full_disk(tmpfs: Callable[..., Path]) -> Path:
    """A mounted tmpfs filled with zeros until the kernel says ENOSPC."""
    point = tmpfs()
    try:
        with open(point / "fill", "wb") as fh:
            while True:
                fh.write(bytes(1 << 16))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    assert shutil.disk_usage(point).free == 0
    return point
