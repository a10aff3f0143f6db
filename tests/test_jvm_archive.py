"""The suite's JVM class archive: another checkout's archive survives this one's training; what
no suite will use again (a long-unused key, a killed training run's leftovers) is deleted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import jvm_archive


def test_prune_keeps_other_checkouts_archives_and_drops_the_dead(tmp_path: Path):
    now = 1_800_000_000.0
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid, live_pid = int(dead.stdout), os.getpid()

    def made(name: str, age_s: float, folder: bool = False) -> Path:
        path = tmp_path / name
        path.mkdir() if folder else path.write_bytes(b"x")
        os.utime(path, (now - age_s, now - age_s))
        return path

    mine = made("jvm-mine.jsa", age_s=30 * 86400)  # this checkout's: kept however old
    other = made("jvm-other.jsa", age_s=86400)  # another checkout's, used yesterday
    stale = made("jvm-stale.jsa", age_s=jvm_archive.KEEP_UNUSED_S + 60)
    dead_part = made(f"jvm-mine.{dead_pid}.part", age_s=0)
    live_part = made(f"jvm-mine.{live_pid}.part", age_s=0)
    dead_work = made(f"train-{dead_pid}", age_s=0, folder=True)
    live_work = made(f"train-{live_pid}", age_s=0, folder=True)

    gone = jvm_archive.prune(tmp_path, keep=mine, now=now)

    assert sorted(gone) == sorted([stale, dead_part, dead_work])
    assert sorted(tmp_path.iterdir()) == sorted([mine, other, live_part, live_work])
