"""`Storage.list_files` on local disk: every file below a directory, at any depth, with its size."""

from __future__ import annotations

from pathlib import Path

from icelab.core import storage
from icelab.core.storage import Storage


def _tree(root: Path) -> dict[str, int]:
    """A table-like tree: day directories, data files, and the files a listing must pass over."""
    written = {}
    for day in ("date=2026-01-01", "date=2026-01-02"):
        for n in range(3):
            path = root / "events" / day / f"part-{n}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x" * (n + 1) * 10)
            written[f"file:{path}"] = (n + 1) * 10
    (root / "events" / "_SUCCESS").write_bytes(b"")
    (root / "events" / "date=2026-01-01" / "notes.txt").write_text("not data")
    # Hadoop's local file system hides its checksum files from listings.
    (root / "events" / "date=2026-01-01" / ".part-0.parquet.crc").write_bytes(b"crc")
    return written


def test_every_file_below_with_its_size(ctx, tmp_path: Path):
    written = _tree(tmp_path)
    found = Storage(ctx.spark).list_files(storage.to_uri(str(tmp_path / "events")), ".parquet")
    assert {f.path: f.size for f in found} == written
    everything = Storage(ctx.spark).list_files(storage.to_uri(str(tmp_path / "events")))
    names = sorted(f.path.rsplit("/", 1)[1] for f in everything)
    data = [f"part-{n}.parquet" for n in range(3) for _ in range(2)]
    assert names == sorted(["_SUCCESS", "notes.txt", *data])


def test_a_missing_directory_lists_nothing(ctx, tmp_path: Path):
    assert Storage(ctx.spark).list_files(storage.to_uri(str(tmp_path / "none"))) == []
