"""The bytes a manifest rewrite will write per entry, measured by writing a sample of the table's
own live entries with Iceberg's manifest writer.

A rewrite writes only live entries, into few manifests, compressed as Iceberg compresses them; the
table's manifests as they are hold deleted entries and, when small, mostly their header. On one
table the bytes per entry were 544 before a rewrite and 114 after it, so a target sized from the
bytes before gave 12 manifests where about 3 were meant. Writing a sample measures what the
rewrite will write: a manifest of one entry gives the fixed part (the header with the table's
schema and spec), one of the sample's entries gives the bytes each entry adds.

WrittenSizes.java takes the same sample and makes the same writes in one call in the driver's JVM;
through py4j, the sample cost about 1,350 calls a table (one per entry read, copied and written).
A driver without javac takes the py4j path; tests/health/test_manifest_bytes.py holds them equal.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from icelab.core import javac
from icelab.core.errors import UserError
from icelab.health.rewrite import Sizes

SOURCE = Path(__file__).with_name("WrittenSizes.java")

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


def _line(one: int, many: int, entries: int) -> Sizes:
    """The line through a manifest of one entry (`one` bytes) and one of `entries` (`many`)."""
    per_entry = (many - one) / (entries - 1)
    return Sizes(max(one - per_entry, 0.0), max(per_entry, 1.0))


def written_sizes(
    spark: Any,
    jtable: Any,
    version: int | None,
    snapshot_id: int | None,
    limit: int = SAMPLE,
    jar_name: str | None = None,
) -> Sizes | None:
    """The line `overhead + per_entry x entries` of the manifests a rewrite of the default spec's
    data manifests at `snapshot_id` would write, from a sample of up to `limit` of their live
    entries; None when there are fewer than two live entries (the caller keeps the table's own line).
    With the Iceberg runtime jar named (`jar_name`), in one call to WrittenSizes.java, unless javac
    is missing; else through py4j."""
    if snapshot_id is None:
        return None
    if jar_name is not None:
        try:
            return written_in_jvm(spark, jtable, version or 2, snapshot_id, limit, jar_name)
        except UserError:  # no javac on this driver: the same sample through py4j
            pass
    return written_by_py4j(spark, jtable, version or 2, snapshot_id, limit)


def written_in_jvm(
    spark: Any, jtable: Any, version: int, snapshot_id: int, limit: int, jar_name: str
) -> Sizes | None:
    """`written_sizes` by WrittenSizes.java, in one call.

    Raises:
        UserError: javac is missing or fails.
    """
    gateway = spark.sparkContext._gateway
    jvm = gateway.jvm
    call = javac.compiled_method(
        gateway,
        [SOURCE],
        "doctor's manifest bytes",
        jar_name,
        jtable,
        "sizes",
        "org.apache.iceberg.Table",
        "java.lang.Long",
        "java.lang.Integer",
        "java.lang.Integer",
        "java.lang.Integer",
        "java.lang.String",
    )
    with tempfile.TemporaryDirectory(prefix="icelab-manifest-bytes-") as tmp:
        # A Python int may arrive as an Integer, which the Long parameter refuses.
        text = str(
            call(jtable, jvm.java.lang.Long.valueOf(str(snapshot_id)), version, limit, MANIFESTS, tmp) or ""
        )
    if not text:
        return None
    one, many, entries = map(int, text.split())
    return _line(one, many, entries)


def written_by_py4j(spark: Any, jtable: Any, version: int, snapshot_id: int, limit: int) -> Sizes | None:
    """`written_sizes` through py4j, a call per entry read, copied and written."""
    snapshot = jtable.snapshot(snapshot_id)
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
        one = _write(jvm, version, spec, files[:1], Path(tmp) / "one.avro")
        many = _write(jvm, version, spec, files, Path(tmp) / "many.avro")
    return _line(one, many, len(files))
