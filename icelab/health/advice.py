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

from icelab.core.units import plural, size
from icelab.health.check import Health, time_field, utc_text
from icelab.health.deletes import delete_advice
from icelab.health.forecast import NO_FIT_LINE, PlanningModel
from icelab.health.gain import Weighed, already_fine, weigh
from icelab.health.orphans import orphan_advice
from icelab.health.reader import DATA, Metadata
from icelab.health.rewrite import ONE_ENTRY_MANIFEST, Simulated, Sizes, simulate, sizes
from icelab.health.source import Source

TARGET_PROPERTY = "commit.manifest.target-size-bytes"
MERGE_PROPERTY = "commit.manifest-merge.enabled"
MAX_TARGET = 8 * 1024 * 1024  # Iceberg's default target
# The floor of a target: at least FLOOR, and FLOOR_HEADERS x the table's fixed manifest bytes, so
# that a manifest at the target is at most an eighth header (7.3 kB of 64 KB for three columns).
FLOOR, FLOOR_HEADERS = 64 * 1024, 8
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

    verdict: str  # healthy, or the rules' level when a rewrite is worth it (icelab.health.gain)
    why: str  # the verdict in one line
    actions: list[str]
    target_bytes: int | None
    target_reason: str
    floor_bytes: int
    cluster_by: list[str] | None
    bytes_per_entry: float | None
    unit: str
    entries_per_unit: float | None
    manifests_after: int | None
    manifest_sizes_after: list[int] | None  # bytes of each manifest the rewrite would write
    simulated: dict[str, Any] | None  # the simulated rewrite (icelab.health.rewrite)
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


def floor_bytes(sizes: Sizes) -> int:
    """The smallest target advised or applied: FLOOR_HEADERS x the table's fixed manifest bytes, up
    to a power of two, at least FLOOR. Below it a manifest is mostly its header, and Iceberg asks
    for one manifest per target's worth of bytes, headers included, so a smaller target multiplies
    manifests (one 10.8 kB manifest became 11 at 1 KB) instead of clustering them."""
    need = FLOOR_HEADERS * max(sizes.overhead, 1.0)
    return min(MAX_TARGET, max(FLOOR, 1 << math.ceil(math.log2(need))))


def _target(
    data_bytes_per_entry: float | None, per_unit_median: float, unit: str, floor: int, given: int | None
) -> tuple[int | None, str]:
    """The target to rewrite at and why: the recommended one, or the given one, never below `floor`."""
    recommended, reason = None, "no data manifest entries to size a target by"
    if data_bytes_per_entry and per_unit_median:
        unit_bytes = per_unit_median * data_bytes_per_entry
        raw = _pow2(UNITS_PER_MANIFEST * unit_bytes)
        recommended = min(MAX_TARGET, max(floor, raw))
        reason = (
            f"{per_unit_median:g} live {'entry' if per_unit_median == 1 else 'entries'} per {unit} "
            "(median) x "
            f"{data_bytes_per_entry:.0f} bytes per entry = {size(unit_bytes, 'kB')} per {unit}; "
            f"x {UNITS_PER_MANIFEST} to the nearest power of two, kept within "
            f"{size_text(floor)} (the floor) .. {size_text(MAX_TARGET)}"
        )
    if given is None:
        return recommended, reason
    if given < floor:
        return floor, (
            f"given {size_text(given)}, below the floor of {size_text(floor)} "
            f"({FLOOR_HEADERS} x this table's fixed manifest bytes): raised to the floor"
        )
    return given, f"given ({size_text(given)}); recommended: {size_text(recommended or floor)} ({reason})"


def _choose(
    h: Health,
    meta: Metadata,
    model: PlanningModel | None,
    target: int,
    floor: int,
    cluster: list[str] | None,
    search: bool,
) -> tuple[Simulated, Weighed, int]:
    """The rewrite at `target`, simulated and weighed; when it is not worth it but the rules trip,
    and `search`, the power-of-two target nearest it (floor .. MAX_TARGET) whose rewrite is."""
    sim = simulate(meta, target, cluster)
    weighed = weigh(h, meta, sim, model)
    if weighed.advised or not search or h.verdict == "healthy" or already_fine(h, meta):
        return sim, weighed, target
    sizes_ = [floor << i for i in range(int(math.log2(MAX_TARGET // floor)) + 1)]
    for other in sorted((t for t in sizes_ if t != target), key=lambda t: abs(math.log2(t / target))):
        candidate = simulate(meta, other, cluster)
        judged = weigh(h, meta, candidate, model)
        if judged.advised:
            return candidate, judged, other
    return sim, weighed, target


def advise(
    h: Health,
    meta: Metadata,
    source: Source,
    model: PlanningModel | None,
    target_bytes: int | None = None,
) -> Advice:
    """The advice for one table state: the verdict, target size, the simulated rewrite,
    predictions, statements, notes. A registered copy (`source.copy`) shares its files with the
    table: expiry there only drops snapshots from the copy's metadata (no file is deleted).

    Args:
        target_bytes: a target size the user chose for the rewrite (else the one recommended
            here; either is raised to the floor); a layout no rewrite improves is left alone.
    """
    data = h.data_manifests
    entries_total = int((data.entries + data.deleted_entries).sum())
    per_entry = float(data.length.sum()) / entries_total if entries_total else None
    unit, per_unit = _units(h, meta)
    per_unit_median = _median(per_unit)
    table_sizes = sizes(data) if len(data) else Sizes(ONE_ENTRY_MANIFEST, 1.0)
    floor = floor_bytes(table_sizes)
    target, reason = _target(per_entry, per_unit_median, unit, floor, target_bytes)
    recommended = target
    found = time_field(meta)
    cluster = None
    if found is not None:
        spec, tfield = found
        if len(spec.fields) > 1 and spec.fields[0] != tfield:
            cluster = [tfield.name, *(f.name for f in spec.fields if f != tfield)]
    sim, weighed = None, Weighed("healthy", "no default partition spec")
    if meta.default_spec_id in meta.specs:
        target = target or floor
        sim, weighed, target = _choose(h, meta, model, target, floor, cluster, search=target_bytes is None)
        if weighed.advised and target_bytes is None and target != recommended:
            reason = (
                f"{size_text(target)}, the target nearest the recommended {size_text(recommended or floor)} "
                f"whose simulated rewrite is worth it ({reason})"
            )
    rewrite = weighed.advised and target is not None
    after = len(sim.rewritten) if sim is not None and sim.changes else None
    units_per_manifest = len(per_unit) / after if after else None
    predictions: list[dict[str, Any]] = []
    after_rows: list[dict[str, Any]] = []  # rows with an after state, and what planning would read then
    after_reads: list[dict[str, float]] = []
    simulated = {w["window"]: w for w in weighed.windows}
    for w in h.windows:
        row: dict[str, Any] = {
            "window": w["window"],
            "units": w["span_units"],
            "now_manifests": w["manifests"],
            "now_mb": round(w["manifest_bytes"] / 1e6, 3),
            "now_delete_manifests": w.get("delete_manifests", 0),
        }
        row |= {f"now_{k}": v for k, v in (w.get("predicted") or {}).items()}
        later = simulated.get(w["window"])
        if later is not None and sim is not None and sim.changes:
            row |= {
                "after_manifests": later["after_manifests"],
                "after_mb": round(later["after_bytes"] / 1e6, 3),
            }
            row |= {k: later[k] for k in ("gain_ms", "error_ms") if k in later}
            after_rows.append(row)
            after_reads.append(later["after_reads"])
        predictions.append(row)
    if model is not None:
        for row, predicted in zip(after_rows, model.predictions(after_reads), strict=True):
            row |= {f"after_{k}": v for k, v in predicted.items()}
    name = source.name or PLACEHOLDER
    catalog, ident = (source.catalog, source.ident) if source.name else ("<catalog>", "<namespace>.<table>")
    statements: list[Statement] = []
    actions = []
    if rewrite and target and sim is not None:
        actions.append("rewrite_manifests")
        statements += _rewrite_statements(meta, name, catalog or "", ident or "", target, cluster, sim)
    snaps = h.snapshots
    if snaps.get("expirable"):
        actions.append("expire_snapshots")
        older = utc_text(snaps["cutoff_us"])
        if source.copy:
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
    stale = model.stale_note() if model is not None else None
    if stale and predictions:
        notes.append(stale)
    return Advice(
        verdict=weighed.verdict,
        why=weighed.why,
        actions=actions,
        target_bytes=target if rewrite else None,
        target_reason=reason,
        floor_bytes=floor,
        cluster_by=cluster if rewrite else None,
        bytes_per_entry=round(per_entry, 1) if per_entry else None,
        unit=unit,
        entries_per_unit=per_unit_median or None,
        manifests_after=after,
        manifest_sizes_after=[int(x) for x in sim.rewritten.length] if rewrite and sim is not None else None,
        simulated=sim.as_json() if sim is not None else None,
        units_per_manifest=round(units_per_manifest, 2) if rewrite and units_per_manifest else None,
        predictions=predictions,
        model=model.describe() if model else NO_FIT_LINE,
        statements=statements,
        notes=notes,
        catalog_settings=source.catalog_settings(),
    )


def _rewrite_statements(
    meta: Metadata,
    name: str,
    catalog: str,
    ident: str,
    target: int,
    cluster: list[str] | None,
    sim: Simulated,
) -> list[Statement]:
    """Set the target, rewrite, and put the table's own target back: Iceberg 1.10's rewrite reads
    its target only from the table property (neither the procedure nor the action takes it as an
    option), and left on the table a small target would stop later commits from merging."""
    before = meta.properties.get(TARGET_PROPERTY)
    mans = meta.manifests
    rewritten = int(((mans.content == DATA) & (mans.spec_id == meta.default_spec_id)).sum())
    sizes_text = ", ".join(size(b, "kB") for b in sim.rewritten.length[:8])
    more = ", ..." if len(sim.rewritten) > 8 else ""
    into = f"into {plural(len(sim.rewritten), 'manifest')} ({sizes_text}{more}, simulated)"
    out = [
        Statement(
            "set_target",
            f"ALTER TABLE {name} SET TBLPROPERTIES ('{TARGET_PROPERTY}'='{target}')",
            "sql",
            True,
            f"target {size_text(target)} for the rewrite only (the next statement but one puts it back)",
        )
    ]
    if cluster is None:
        out.append(
            Statement(
                "rewrite_manifests",
                f"CALL {catalog}.system.rewrite_manifests(table => '{ident}')",
                "sql",
                True,
                f"rewrite the {plural(rewritten, 'data manifest')} of spec {meta.default_spec_id} {into}, "
                "clustered by partition",
            )
        )
    else:
        out.append(
            Statement(
                "rewrite_manifests",
                "spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)"
                ".rewriteManifests(spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable("
                f"spark._jsparkSession, '{name}')).sortBy({cluster!r}).execute()",
                "pyspark",
                True,
                f"rewrite {into}, clustered by {cluster[0]} first (the SQL procedure would cluster by "
                f"{meta.specs[meta.default_spec_id].fields[0].name} first, and a time window would open a "
                "manifest per value of it)",
            )
        )
    restore = (
        f"ALTER TABLE {name} UNSET TBLPROPERTIES ('{TARGET_PROPERTY}')"
        if before is None
        else f"ALTER TABLE {name} SET TBLPROPERTIES ('{TARGET_PROPERTY}'='{before}')"
    )
    was = "unset" if before is None else before
    out.append(
        Statement(
            "restore_target",
            restore,
            "sql",
            True,
            f"put {TARGET_PROPERTY} back as it was ({was}): run even when the rewrite fails",
        )
    )
    return out


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
            f"{size(files['small_file_bytes'])}; {plural(files['compaction_partitions'], 'partition')} "
            f"{'holds' if files['compaction_partitions'] == 1 else 'hold'} 5 or more of them (what "
            "rewrite_data_files compacts by default); not run by --apply"
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
    """Run the statements `--apply` runs, in order; what ran and how long each took. When one
    fails, the `restore_target` statements still to come run before the error goes up, so the
    table keeps its own manifest target."""
    ran = []
    pending = [st for st in statements if st.applies]
    try:
        while pending:
            st = pending[0]
            t0 = time.perf_counter()
            _run(spark, st)
            pending.pop(0)
            ran.append({"action": st.action, "text": st.text, "seconds": round(time.perf_counter() - t0, 3)})
    except Exception:
        for st in pending[1:]:
            if st.action == "restore_target":
                _run(spark, st)
        raise
    return ran


def _run(spark: SparkSession, st: Statement) -> None:
    if st.language == "sql":
        spark.sql(st.text).collect()
    else:
        # The PySpark line built in `advise`, run as printed (no SQL procedure does this step).
        exec(st.text, {"spark": spark})


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
