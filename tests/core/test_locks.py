"""Locks between icelab processes: shared readers together, an exclusive builder alone, and a
reader's upgrade to builder that waits for the other readers (real processes, real flock)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from icelab.core import locks
from icelab.core.errors import UserError

KEY = "/data/tiny-0123456789ab"

# A second icelab process: takes KEY in the mode given, says so, holds it until told to go.
HOLDER = textwrap.dedent(
    """
    import sys
    from icelab.core import locks
    locks.owner = "holder"
    locks.acquire(sys.argv[1], "the dataset", exclusive=sys.argv[2] == "exclusive")
    print("held", flush=True)
    sys.stdin.readline()
    locks.release(sys.argv[1])
    """
)

# Whether another process can take KEY in a mode right now, without waiting.
PROBE = textwrap.dedent(
    """
    import sys
    from icelab.core import locks
    locks.wait_s = 0
    try:
        locks.acquire(sys.argv[1], "the dataset", exclusive=sys.argv[2] == "exclusive")
    except locks.UserError:
        print("busy")
    else:
        print("free")
    """
)


@pytest.fixture(autouse=True)
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("ICELAB_LOCK_DIR", str(tmp_path))
    monkeypatch.setattr(locks, "wait_s", 0.0)
    yield tmp_path
    locks.release(KEY)


def probe(mode: str) -> str:
    """`free` or `busy`: what another process finds when it asks for KEY in `mode`."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, KEY, mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def holder() -> Iterator[subprocess.Popen]:
    """Another process holding KEY shared, until the test lets it go (closes its stdin)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, KEY, "shared"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "held"
    yield proc
    if proc.poll() is None:
        proc.stdin.close()
        proc.wait(timeout=60)


def test_readers_share_and_a_builder_excludes_them():
    locks.acquire(KEY, "the dataset", exclusive=False)
    assert (probe("shared"), probe("exclusive")) == ("free", "busy")
    locks.release(KEY)
    locks.acquire(KEY, "the dataset", exclusive=True)
    assert probe("shared") == "busy"
    locks.release(KEY)
    assert probe("exclusive") == "free"


def test_a_reader_upgraded_to_builder_holds_the_key_alone():
    locks.acquire(KEY, "the dataset", exclusive=False)
    locks.acquire(KEY, "the dataset", exclusive=True)
    assert probe("shared") == "busy"
    locks.acquire(KEY, "the dataset", exclusive=False)  # and back down to a reader
    assert (probe("shared"), probe("exclusive")) == ("free", "busy")


def test_an_upgrade_beside_another_reader_is_refused_naming_it(holder):
    locks.acquire(KEY, "the dataset", exclusive=False)
    with pytest.raises(UserError, match=r"the dataset is in use by pid \d+ \(shared, since .*\): holder"):
        locks.acquire(KEY, "the dataset", exclusive=True)
    assert KEY not in locks._held  # the failed conversion dropped this process's own lock


def test_an_upgrade_waits_until_the_other_reader_is_gone(holder, monkeypatch):
    monkeypatch.setattr(locks, "wait_s", 60.0)
    locks.acquire(KEY, "the dataset", exclusive=False)
    holder.stdin.write("go\n")  # the holder lets go, before or while this process waits
    holder.stdin.flush()
    locks.acquire(KEY, "the dataset", exclusive=True)
    assert holder.wait(timeout=60) == 0
    assert probe("shared") == "busy"


def test_a_wait_that_runs_out_names_the_holder(holder, monkeypatch):
    monkeypatch.setattr(locks, "wait_s", 1.0)
    with pytest.raises(UserError, match=r"gave up after 1 s waiting for the dataset: still in use by pid"):
        locks.acquire(KEY, "the dataset", exclusive=True)


def test_a_would_be_builder_stops_waiting_once_the_other_has_built(holder, monkeypatch, tmp_path):
    # Two runs found no dataset; the other built it and reads on under its shared lock, which it
    # keeps: the wait for an exclusive lock ends when the built mark appears, holding nothing.
    monkeypatch.setattr(locks, "wait_s", 60.0)
    mark = tmp_path / "dataset.json"
    threading.Timer(1.0, mark.write_text, ("{}",)).start()
    assert locks.acquire(KEY, "the dataset", exclusive=True, unless=mark.exists) is False
    assert KEY not in locks._held and probe("exclusive") == "busy"  # the holder still reads
    assert locks.acquire(KEY, "the dataset", exclusive=False) is True
