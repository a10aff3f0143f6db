"""The bytes a manifest rewrite will write per entry, measured by writing a sample of the table's
own live entries with Iceberg's manifest writer.

A rewrite writes only live entries, into few manifests, compressed as Iceberg compresses them; the
table's manifests as they are hold deleted entries and, when small, mostly their header. On one
table the bytes per entry were 544 before a rewrite and 114 after it, so a target sized from the
bytes before gave 12 manifests where about 3 were meant. Writing a sample measures what the
rewrite will write: a manifest of one entry gives the fixed part (the header with the table's
schema and spec), one of the sample's entries gives the bytes each entry adds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from icelab.health.rewrite import Sizes

# Live entries written for the sample: enough for several compressed Avro blocks, few enough that
# reading them through py4j takes a second or so; taken from at most MANIFESTS manifests spread over
# the table, so that a table and its rewrite give the same sample's worth (the fixed point).
SAMPLE = 1000
MANIFESTS = 40


def _write(jvm: Any, version: int, spec: Any, files: list[tuple[Any, int]], path: Path) -> int:
    """Bytes of one manifest of `files` (data file, adding snapshot), written as a rewrite writes
    them: as existing entries."""
    out = jvm.org.apache.iceberg.Files.localOutput(jvm.java.io.File(str(path)))
    writer = jvm.org.apache.iceberg.ManifestFiles.write(version, spec, out, None)
    try:
        for f, snapshot in files:
            seq = f.dataSequenceNumber()
            writer.existing(f, snapshot, seq if seq is not None else 0, f.fileSequenceNumber())
    finally:
        writer.close()
    return int(writer.length())


def written_sizes(
    spark: Any, jtable: Any, version: int | None, snapshot_id: int | None, limit: int = SAMPLE
) -> Sizes | None:
    """The line `overhead + per_entry x entries` of the manifests a rewrite of the default spec's
    data manifests at `snapshot_id` would write, from a sample of up to `limit` of their live
    entries; None when there are fewer than two live entries (the caller keeps the table's own line)."""
    snapshot = jtable.snapshot(snapshot_id) if snapshot_id is not None else None
    if snapshot is None:
        return None
    jvm = spark.sparkContext._jvm
    spec = jtable.spec()
    io, specs = jtable.io(), jtable.specs()
    mine = [m for m in snapshot.dataManifests(io) if m.partitionSpecId() == spec.specId()]
    step = max(1, -(-len(mine) // MANIFESTS))
    chosen = mine[::step]
    each = max(1, -(-limit // max(len(chosen), 1)))
    files: list[tuple[Any, int]] = []
    for manifest in chosen:
        reader = jvm.org.apache.iceberg.ManifestFiles.read(manifest, io, specs)
        try:
            it = reader.iterator()
            taken = 0
            while taken < each and it.hasNext():
                files.append((it.next().copy(), int(manifest.snapshotId())))
                taken += 1
        finally:
            reader.close()
    if len(files) < 2:
        return None
    # A rewrite clusters entries by partition; neighbours alike compress alike.
    files.sort(key=lambda fs: str(fs[0].partition().toString()))
    with tempfile.TemporaryDirectory(prefix="icelab-manifest-bytes-") as tmp:
        one = _write(jvm, version or 2, spec, files[:1], Path(tmp) / "one.avro")
        many = _write(jvm, version or 2, spec, files, Path(tmp) / "many.avro")
    per_entry = (many - one) / (len(files) - 1)
    return Sizes(max(one - per_entry, 0.0), max(per_entry, 1.0))
