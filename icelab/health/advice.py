"""Advice with numbers: the manifest target size, how to cluster, predicted planning, the exact
statements to run, and running them (`--apply`).

The target size: a rewritten manifest should cover about one to two units of the time field a
window filters on (all values of the other fields together), which is where the planning
experiments at medium found narrow windows cheapest (docs/planning.md: 128 KB and 256 KB
manifests of 1 and 1.8 days). So: median live entries per time unit x bytes per manifest entry
(the table's data manifest bytes over their entries, headers included, as `rewrite_manifests`
counts them when it divides the bytes by the target) x 1.5, rounded to the nearest power of two,
at most Iceberg's own default of 8 MB (larger partitions then spread over several manifests,
which Iceberg plans in parallel). Without a time field, the unit is one partition.

`rewrite_manifests` (the SQL procedure) clusters entries by the spec's fields in their order. When
the time field is not first (e.g. `bucket(8, id), days(ts)`), a one-day window would open one
manifest per bucket; the Spark action's `sortBy` puts the time field first instead, and the
advice says so, with the PySpark line that does it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from icelab.health.check import Health, time_field, utc_text
from icelab.health.deletes import delete_advice
from icelab.health.forecast import NO_FIT_LINE, PlanningModel
from icelab.health.orphans import orphan_advice
from icelab.health.reader import Metadata
from icelab.health.source import Source

TARGET_PROPERTY = "commit.manifest.target-size-bytes"
MERGE_PROPERTY = "commit.manifest-merge.enabled"
MIN_TARGET, MAX_TARGET = 1024, 8 * 1024 * 1024
UNITS_PER_MANIFEST = 1.5
PLACEHOLDER = "<catalog>.<namespace>.<table>"


@dataclass
class Statement:
    """One maintenance step, as it is printed and as `--apply` runs it.

    Attributes:
        action: set_target, rewrite_manifests, expire_snapshots (applied), or compact,
            rewrite_deletes (advice only: `--apply` never rewrites data files).
        text: the exact Spark SQL (or, where no SQL exists, the PySpark line).
        language: `sql` or `pyspark`.
        applies: whether `--apply` runs it.
        why: one line.
    """

    action: str
    text: str
    language: str
    applies: bool
    why: str


@dataclass
class Advice:
    """What to do about one table state, with the numbers behind it."""

    actions: list[str]
    target_bytes: int | None
    target_reason: str
    cluster_by: list[str] | None
    bytes_per_entry: float | None
    unit: str
    entries_per_unit: float | None
    manifests_after: int | None
    units_per_manifest: float | None
    predictions: list[dict[str, Any]]
    model: str  # the cost model the predictions come from, or why there are none
    statements: list[Statement]
    notes: list[str]
    catalog_settings: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _pow2(value: float) -> int:
    """The power of two nearest to `value` (on a log scale)."""
    return 1 << max(0, round(math.log2(max(value, 1))))


def size_text(size: int) -> str:
    """Bytes in Iceberg's binary units, as a profile names them: 256KB, 8MB."""
    for unit, scale in (("MB", 1024**2), ("KB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"


def _units(h: Health, meta: Metadata) -> tuple[str, list[float]]:
    """Live data entries per time unit of the default spec's time field (per partition without one)."""
    live = h.live_partitions
    found = time_field(meta)
    if found is None:
        return "partition", [float(v) for v in live.files]
    spec, tfield = found
    index = spec.fields.index(tfield)
    mine = live[live.spec_id == spec.spec_id]
    per_unit: dict[Any, float] = {}
    for key, files in zip(mine.key, mine.files, strict=True):
        per_unit[key[index]] = per_unit.get(key[index], 0.0) + float(files)
    return str(tfield.time_unit), list(per_unit.values())


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return (ordered[(n - 1) // 2] + ordered[n // 2]) / 2 if n else 0.0


def advise(
    h: Health,
    meta: Metadata,
    source: Source,
    model: PlanningModel | None,
    target_bytes: int | None = None,
    copy: bool = False,
) -> Advice:
    """The advice for one table state: actions, target size, predictions, statements, notes.

    Args:
        target_bytes: a target size the user chose for the rewrite (else the one recommended
            here); a healthy layout is left alone whatever the size.
        copy: the statements run on a registered copy, which shares its files with the table:
            expiry then only drops snapshots from the copy's metadata (no file is deleted).
    """
    data = h.data_manifests
    entries_total = int((data.entries + data.deleted_entries).sum())
    live_entries = int(data.entries.sum())
    per_entry = float(data.length.sum()) / entries_total if entries_total else None
    unit, per_unit = _units(h, meta)
    per_unit_median = _median(per_unit)
    rewrite = h.verdict != "healthy"
    recommended = None
    reason = "the layout is healthy: no rewrite advised"
    if per_entry and per_unit_median:
        unit_bytes = per_unit_median * per_entry
        recommended = min(MAX_TARGET, max(MIN_TARGET, _pow2(UNITS_PER_MANIFEST * unit_bytes)))
        reason = (
            f"{per_unit_median:g} live entries per {unit} (median) x {per_entry:.0f} bytes per entry "
            f"= {unit_bytes / 1024:.1f} KB per {unit}; x {UNITS_PER_MANIFEST} to the nearest power of two "
            f"(kept within {size_text(MIN_TARGET)}..{size_text(MAX_TARGET)})"
        )
    target = target_bytes or recommended
    if target_bytes is not None:
        reason = f"given ({size_text(target_bytes)}); recommended: {size_text(recommended or 0)} ({reason})"
    found = time_field(meta)
    cluster = None
    if found is not None:
        spec, tfield = found
        if len(spec.fields) > 1 and spec.fields[0] != tfield:
            cluster = [tfield.name, *(f.name for f in spec.fields if f != tfield)]
    total_bytes = int(data.length.sum())
    after = max(1, math.ceil(total_bytes / target)) if target and total_bytes else None
    units_per_manifest = len(per_unit) / after if after else None
    bytes_after = live_entries * per_entry if per_entry else 0.0
    predictions: list[dict[str, Any]] = []
    after_rows: list[dict[str, Any]] = []  # rows with an after state, and what planning would read then
    after_reads: list[dict[str, float]] = []
    for w in h.windows:
        row: dict[str, Any] = {
            "window": w["window"],
            "units": w["span_units"],
            "now_manifests": w["manifests"],
            "now_mb": round(w["manifest_bytes"] / 1e6, 3),
            "now_delete_manifests": w.get("delete_manifests", 0),
        }
        row |= {f"now_{k}": v for k, v in (w.get("predicted") or {}).items()}
        if rewrite and after and units_per_manifest:
            d = units_per_manifest
            kept = (
                min(float(after), (w["span_units"] + d - 1) / d)
                if d >= 1
                else min(after, w["span_units"] / d)
            )
            kept_bytes = kept * bytes_after / after
            row |= {"after_manifests": round(kept, 1), "after_mb": round(kept_bytes / 1e6, 3)}
            # The rewrite cuts the live entries into `after` manifests of about equal size.
            per_manifest = live_entries / after
            after_rows.append(row)
            after_reads.append(
                {
                    # The rewrite leaves delete manifests as they are: planning still opens them.
                    "manifests_read": kept + w.get("delete_manifests", 0),
                    "entries_read": kept * per_manifest + w.get("delete_entries_read", 0),
                    "largest_manifest_entries": per_manifest,
                    "entries_matched": w["entries_matched"],
                    "manifest_bytes_read": kept_bytes + w.get("delete_manifest_bytes", 0),
                }
            )
        predictions.append(row)
    if model is not None:
        for row, predicted in zip(after_rows, model.predictions(after_reads), strict=True):
            row |= {f"after_{k}": v for k, v in predicted.items()}
    name = source.name or PLACEHOLDER
    catalog, ident = (source.catalog, source.ident) if source.name else ("<catalog>", "<namespace>.<table>")
    statements: list[Statement] = []
    actions = []
    if rewrite and target:
        actions.append("rewrite_manifests")
        statements.append(
            Statement(
                "set_target",
                f"ALTER TABLE {name} SET TBLPROPERTIES ('{TARGET_PROPERTY}'='{target}')",
                "sql",
                True,
                f"manifests of {size_text(target)}: about {UNITS_PER_MANIFEST} {unit}s each",
            )
        )
        if cluster is None:
            statements.append(
                Statement(
                    "rewrite_manifests",
                    f"CALL {catalog}.system.rewrite_manifests(table => '{ident}')",
                    "sql",
                    True,
                    f"rewrite the {len(data)} data manifests into about {after}, clustered by partition",
                )
            )
        else:
            statements.append(
                Statement(
                    "rewrite_manifests",
                    "spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)"
                    ".rewriteManifests(spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable("
                    f"spark._jsparkSession, '{name}')).sortBy({cluster!r}).execute()",
                    "pyspark",
                    True,
                    f"rewrite into about {after} manifests clustered by {cluster[0]} first (the SQL "
                    f"procedure would cluster by {meta.specs[meta.default_spec_id].fields[0].name} first, "
                    "and a time window would open a manifest per value of it)",
                )
            )
    snaps = h.snapshots
    if snaps.get("expirable"):
        actions.append("expire_snapshots")
        older = utc_text(snaps["cutoff_us"])
        if copy:
            statements.append(
                Statement(
                    "expire_snapshots",
                    "spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, "
                    f"'{name}').expireSnapshots().expireOlderThan({snaps['cutoff_us'] // 1000})"
                    f".retainLast({snaps['retain_last']}).cleanExpiredFiles(False).commit()",
                    "pyspark",
                    True,
                    f"drop {snaps['expirable']} snapshots older than {snaps['retain']} from the copy's "
                    "metadata only: the copy shares its files with the table, so none is deleted",
                )
            )
        else:
            statements.append(
                Statement(
                    "expire_snapshots",
                    f"CALL {catalog}.system.expire_snapshots(table => '{ident}', "
                    f"older_than => TIMESTAMP '{older}', retain_last => {snaps['retain_last']})",
                    "sql",
                    True,
                    f"{snaps['expirable']} snapshots older than {snaps['retain']} ({snaps['retain_from']}), "
                    f"keeping the newest {snaps['retain_last']}, the current one and every branch or tag",
                )
            )
    notes = _notes(h, meta, source, catalog or "", ident or "", statements)
    return Advice(
        actions=actions,
        target_bytes=target if rewrite else None,
        target_reason=reason,
        cluster_by=cluster if rewrite else None,
        bytes_per_entry=round(per_entry, 1) if per_entry else None,
        unit=unit,
        entries_per_unit=per_unit_median or None,
        manifests_after=after if rewrite else None,
        units_per_manifest=round(units_per_manifest, 2) if rewrite and units_per_manifest else None,
        predictions=predictions,
        model=model.describe() if model else NO_FIT_LINE,
        statements=statements,
        notes=notes,
        catalog_settings=source.catalog_settings(),
    )


def _notes(
    h: Health, meta: Metadata, source: Source, catalog: str, ident: str, statements: list[Statement]
) -> list[str]:
    notes = []
    if meta.properties.get(MERGE_PROPERTY, "true").lower() == "false":
        notes.append(
            f"{MERGE_PROPERTY}=false: every commit adds a manifest, so the layout drifts back after "
            "a rewrite; rewrite on a schedule or turn merging on"
        )
    files = h.files
    if files.get("compaction_partitions"):
        notes.append(
            f"small files: {files['small_files']:,} of {files['data_files']:,} data files are below "
            f"{files['small_file_bytes'] / 2**20:.0f} MB; {files['compaction_partitions']} partitions hold 5 "
            "or more of them (what rewrite_data_files compacts by default); not run by --apply"
        )
        statements.append(
            Statement(
                "compact",
                f"CALL {catalog}.system.rewrite_data_files(table => '{ident}')",
                "sql",
                False,
                "compact small data files (rewrites data: review first)",
            )
        )
    for found in (
        *delete_advice(h.deletes, catalog, ident),
        *orphan_advice(h.orphans, catalog, ident),
    ):
        if found.note:
            notes.append(found.note)
        if found.sql and found.action:
            statements.append(Statement(found.action, found.sql, "sql", False, found.why))
    if not source.writable:
        notes.append(
            "read by its metadata file: nothing can be committed to it this way; run the statements in "
            "the catalog that owns the table, or use --copy"
        )
    return notes


def run_statements(spark: SparkSession, statements: list[Statement]) -> list[dict[str, Any]]:
    """Run the statements `--apply` runs, in order; what ran and how long each took."""
    ran = []
    for st in statements:
        if not st.applies:
            continue
        t0 = time.perf_counter()
        if st.language == "sql":
            spark.sql(st.text).collect()
        else:
            # The PySpark line built in `advise`, run as printed (no SQL procedure does this step).
            exec(st.text, {"spark": spark})
        ran.append({"action": st.action, "text": st.text, "seconds": round(time.perf_counter() - t0, 3)})
    return ran


def register_copy(spark: SparkSession, source: Source, meta: Metadata, copy_source: Source) -> None:
    """Register `copy_source` from the table's current metadata file (no data copied).

    An older copy of the same name is dropped first, never purged: its files are the table's.
    """
    if not meta.metadata_file:
        raise RuntimeError(f"{source.describe()}: no current metadata file to copy")
    spark.sql(f"DROP TABLE IF EXISTS {copy_source.name}")
    spark.sql(
        f"CALL {copy_source.catalog}.system.register_table(table => '{copy_source.ident}', "
        f"metadata_file => '{meta.metadata_file}')"
    ).collect()
