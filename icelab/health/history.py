"""A table's commits as its metadata keeps them: what `icelab.health.ingest_model` fits.

The commits come from the live entries at the snapshot read, grouped by the snapshot that added
each (an entry keeps it through a manifest rewrite), so a history whose snapshots expired still
has them. A file since removed (a delete, a compaction) is not counted: only what the table holds
now. The time units are those of the default spec's time field; entries of an older spec are left
out, as the plan's future is written in the default spec. Commit times come from the snapshots
still kept.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from icelab.health.check import time_field
from icelab.health.ingest_model import Commit, TooShort
from icelab.health.reader import DATA, Metadata, _normalized
from icelab.health.source import Source, metadata_table


def read_commits(spark: SparkSession, source: Source, meta: Metadata) -> tuple[list[Commit], str]:
    """Every commit that added a live entry at `meta`'s snapshot, in history order, and the unit
    of the time field.

    Raises:
        TooShort: the default spec has no time field: the plan's timeline is partition time.
    """
    found = time_field(meta)
    if found is None:
        raise TooShort(
            "no time partition field in the default spec: a plan's timeline is the table's partition time"
        )
    spec, tfield = found
    entries = metadata_table(spark, source, "entries", meta.current_snapshot_id)
    file_type = entries.schema["data_file"].dataType
    ptype = file_type["partition"].dataType
    spec_col = (
        F.col("data_file.spec_id") if "spec_id" in file_type.fieldNames() else F.lit(meta.default_spec_id)
    )
    has_seq = "sequence_number" in entries.schema.fieldNames()
    rows = (
        entries.where(F.col("status") < 2)
        .select(
            "snapshot_id",
            (F.col("sequence_number") if has_seq else F.lit(None).cast("long")).alias("seq"),
            (F.col("data_file.content") != DATA).alias("deletes"),
            (spec_col == spec.spec_id).alias("default_spec"),
            _normalized(
                F.col("data_file.partition").getField(tfield.name), ptype[tfield.name].dataType
            ).alias("unit"),
        )
        .groupBy("snapshot_id", "seq", "deletes", "default_spec", "unit")
        .count()
        .collect()
    )
    times = dict(zip(meta.snapshots.snapshot_id, meta.snapshots.committed_us, strict=True))
    per: dict[int, dict] = {}
    for r in rows:
        c = per.setdefault(r.snapshot_id, {"seq": r.seq, "units": {}, "deletes": 0})
        if r.deletes:
            c["deletes"] += r["count"]
        elif r.default_spec and r.unit is not None:
            unit = int(tfield.normalize(r.unit))
            c["units"][unit] = c["units"].get(unit, 0) + r["count"]

    def place(item: tuple[int, dict]) -> tuple[float, float, float]:
        # A format-1 table's sequence numbers are all 0; an expired snapshot has no time.
        sid, c = item
        seq = c["seq"] if c["seq"] else float("inf")
        when = times.get(sid)
        return (seq, float("inf") if when is None else float(when), float(max(c["units"], default=0)))

    ordered = sorted(per.items(), key=place)
    commits = [
        Commit(
            order=i,
            snapshot_id=int(sid),
            units=c["units"],
            delete_entries=c["deletes"],
            committed_us=None if times.get(sid) is None else int(times[sid]),
        )
        for i, (sid, c) in enumerate(ordered)
    ]
    return commits, str(tfield.time_unit)
