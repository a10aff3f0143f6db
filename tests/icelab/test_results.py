"""Results files on a full disk: one line naming the file and what to do, no partial file left."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.errors import UserError
from icelab.results import write_atomic


def test_write_atomic_writes_the_whole_file(tmp_path):
    write_atomic(tmp_path / "run.json", "{}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert (tmp_path / "run.json").read_text() == "{}\n"


def test_write_atomic_on_a_full_disk(full_disk: Path):
    message = (
        f"no space left on the device holding '{full_disk}' while writing summary.csv; "
        "free some space or give another paths.results_dir"
    )
    with pytest.raises(UserError) as caught:
        write_atomic(full_disk / "summary.csv", "x" * 100_000)
    assert str(caught.value) == message
    assert sorted(p.name for p in full_disk.iterdir()) == ["fill"]  # the temporary file is gone
