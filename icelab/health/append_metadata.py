"""Commits appended to a scratch copy as metadata only: entries shaped like the table's own.

Each new entry copies one of the table's live data files (its size, record count and column
metrics) under a path in the copy's own directory, where no file is ever written: planning opens
manifests, never data files. Its partition is the template's with the time field set to the
entry's unit, and the time column's bounds are that unit's, so a window prunes it as it would a
real file of that unit. Each commit is one `AppendFiles` (`newAppend`), so the copy's merge
settings act as they act on the table's own appends.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np
from pyspark.sql import SparkSession

from icelab.health.ingest_model import Commit
from icelab.health.scratch import ScratchCopy
from icelab.health.spec import DAY_US, Field

TEMPLATES = 64  # live data files sampled as templates


def templates(jtable: Any, most: int = TEMPLATES) -> list[Any]:
    """Up to `most` live data files of the current spec, with their column metrics."""
    spec_id = jtable.spec().specId()
    tasks = jtable.newScan().includeColumnStats().planFiles()
    found = []
    try:
        it = tasks.iterator()
        while it.hasNext() and len(found) < most:
            file = it.next().file()
            if file.specId() == spec_id:
                found.append(file)
    finally:
        tasks.close()
    return found


def _bounds(spark: SparkSession, jtable: Any, tfield: Field, unit: int) -> tuple[int, Any, Any] | None:
    """The time column's (field id, lower, upper) bounds for an entry of `unit`, as Iceberg stores
    them (None: a source column of another type, whose bounds are dropped)."""
    jvm = spark._jvm
    source = jtable.schema().findField(tfield.source)
    kind = str(source.type().typeId().toString())
    start, end = tfield.unit_start(unit), tfield.unit_start(unit + 1) - 1
    if kind == "TIMESTAMP":
        low, high = start, end
    elif kind == "DATE":
        low, high = start // DAY_US, end // DAY_US
    else:
        return None
    convert = jvm.org.apache.iceberg.types.Conversions.toByteBuffer
    return source.fieldId(), convert(source.type(), low), convert(source.type(), high)


def _metrics(spark: SparkSession, template: Any, bounds: tuple[int, Any, Any] | None, time_id: int) -> Any:
    jvm = spark._jvm

    def edited(found: Any, value: Any) -> Any:
        out = jvm.java.util.HashMap() if found is None else jvm.java.util.HashMap(found)
        out.remove(jvm.java.lang.Integer(time_id))
        if value is not None:
            out.put(jvm.java.lang.Integer(time_id), value)
        return out

    low, high = (bounds[1], bounds[2]) if bounds else (None, None)
    return jvm.org.apache.iceberg.Metrics(
        template.recordCount(),
        template.columnSizes(),
        template.valueCounts(),
        template.nullValueCounts(),
        template.nanValueCounts(),
        edited(template.lowerBounds(), low),
        edited(template.upperBounds(), high),
    )


def append(
    spark: SparkSession, copy: ScratchCopy, tfield: Field, commits: Sequence[Commit], seed: int
) -> list[int]:
    """Append `commits` to the copy, one snapshot each; their snapshot ids, in order.

    Raises:
        ValueError: the copy holds no live data file of its current spec to copy.
    """
    jvm, jtable = spark._jvm, copy.jtable
    found = templates(jtable)
    if not found:
        raise ValueError(f"{copy.source.given}: no live data file of the current spec to shape entries by")
    spec = jtable.spec()
    position = [str(f.name()) for f in spec.fields()].index(tfield.name)
    time_id = int(jtable.schema().findField(tfield.source).fieldId())
    base = f"{str(jtable.location()).rstrip('/')}/data/icelab-future"
    rng = np.random.default_rng(seed)
    ids = []
    for c in commits:
        files = jvm.org.apache.iceberg.DataFiles
        app = jtable.newAppend()
        for unit, n in sorted(c.units.items()):
            bounds = _bounds(spark, jtable, tfield, unit)
            for pick in rng.integers(0, len(found), size=n):
                template = found[pick]
                partition = template.partition().copy()
                partition.set(position, int(unit))
                entry = (
                    files.builder(spec)
                    .copy(template)
                    .withPath(f"{base}/{uuid.uuid4().hex}.parquet")
                    .withPartition(partition)
                    .withMetrics(_metrics(spark, template, bounds, time_id))
                    .build()
                )
                app.appendFile(entry)
        app.commit()
        jtable.refresh()
        ids.append(int(jtable.currentSnapshot().snapshotId()))
    return ids
