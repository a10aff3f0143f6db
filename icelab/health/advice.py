"""Advice with numbers: the manifest layout and its target size (`target`), how to cluster,
predicted planning, the exact statements to run, and running them (`--apply`).

`rewrite_manifests` (the SQL procedure) clusters entries by the spec's fields in their order. When
the time field is not first (e.g. `bucket(8, id), days(ts)`), a one-day window would open one
manifest per bucket; the Spark action's `sortBy` puts the time field first instead, and the
advice says so, with the PySpark line that does it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import failpoints
from icelab.core.units import plural, size
from icelab.health import journal
from icelab.health.check import Health, time_field, utc_text
from icelab.health.deletes import delete_advice
from icelab.health.forecast import NO_FIT_LINE, PlanningModel
from icelab.health.gain import PREDICTED, Weighed, weigh
from icelab.health.orphans import orphan_advice
from icelab.health.reader import DATA, Metadata
from icelab.health.rewrite import ONE_ENTRY_MANIFEST, Simulated, Sizes, simulate, sizes
from icelab.health.source import Source
from icelab.health.target import FLOOR, FLOOR_HEADERS, MAX_TARGET, binary_text, floor_bytes, layout

__all__ = [
    "FLOOR",
    "FLOOR_HEADERS",
    "MAX_TARGET",
    "Advice",
    "LostRace",
    "Statement",
    "advise",
    "floor_bytes",
]

TARGET_PROPERTY = "commit.manifest.target-size-bytes"
MERGE_PROPERTY = "commit.manifest-merge.enabled"
PLACEHOLDER = "<catalog>.<namespace>.<table>"
RETRIES_PROPERTY = "commit.retry.num-retries"
RETRIES_DEFAULT = "4"  # Iceberg's
COMMIT_FAILED = "org.apache.iceberg.exceptions.CommitFailedException"
WHAT = {
    "set_target": "setting the manifest target",
    "rewrite_manifests": "the manifest rewrite",
    "restore_target": "putting the manifest target back",
    "expire_snapshots": "the snapshot expiry",
}


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
    bytes_per_entry: float | None  # as the rewrite writes an entry (`manifest_bytes`)
    manifests_meant: int | None  # the layout the target is sized for (`target.layout`)
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
    # The rewrite to the layout meant, as statements, whether advised or not (what a scratch copy runs).
    proposed: list[Statement] = field(default_factory=list)
    basis: str = PREDICTED  # what the verdict rests on: gain.ON_COPY, or gain.PREDICTED

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


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


def _given(given: int, floor: int, meant: str) -> tuple[int, str]:
    """A target the user chose, never below `floor`, and why."""
    if given < floor:
        return floor, (
            f"given {binary_text(given)}, below the floor of {binary_text(floor)} "
            f"({FLOOR_HEADERS} x this table's fixed manifest bytes): raised to the floor"
        )
    return given, f"given ({binary_text(given)}); the layout meant: {meant}"


def advise(
    h: Health,
    meta: Metadata,
    source: Source,
    model: PlanningModel | None,
    target_bytes: int | None = None,
    written: Sizes | None = None,
    measured: list[dict[str, Any]] | None = None,
) -> Advice:
    """The advice for one table state: the verdict, target size, the simulated rewrite,
    predictions, statements, notes. A registered copy (`source.copy`) shares its files with the
    table: expiry there only drops snapshots from the copy's metadata (no file is deleted).

    Args:
        target_bytes: a target size the user chose for the rewrite (else the one that gives the
            layout meant, `target.layout`; a given one is raised to the floor); a layout no
            rewrite improves is left alone.
        written: the bytes per manifest and per entry a rewrite writes
            (`manifest_bytes.written_sizes`); None: the line of the table's own manifests.
        measured: the simulated rewrite measured on a scratch copy, per window
            (`Diagnosis.before_after` rows): the verdict rests on it (`gain.measured_verdict`).
    """
    data = h.data_manifests
    mine = data[data.spec_id == meta.default_spec_id]
    unit, per_unit = _units(h, meta)
    per_unit_median = _median(per_unit)
    table_sizes = sizes(data) if len(data) else Sizes(ONE_ENTRY_MANIFEST, 1.0)
    written = written or table_sizes
    floor = floor_bytes(written)
    live = h.live_partitions
    live_entries = int(live.files[live.spec_id == meta.default_spec_id].sum())
    meant = layout(live_entries, per_unit_median, unit, written, int(mine.length.sum()), floor)
    reason = meant.reason if meant else "no live entries of the default spec to size a target by"
    target = meant.target if meant else None
    if target_bytes is not None:
        target, reason = _given(target_bytes, floor, reason)
    found = time_field(meta)
    cluster = None
    if found is not None:
        spec, tfield = found
        if len(spec.fields) > 1 and spec.fields[0] != tfield:
            cluster = [tfield.name, *(f.name for f in spec.fields if f != tfield)]
    sim, weighed = None, Weighed("healthy", "no default partition spec")
    if not live_entries and not len(data):
        weighed = Weighed("healthy", "empty: no data file and no data manifest, nothing to do")
    elif meta.default_spec_id in meta.specs and target is not None:
        sim = simulate(meta, target, cluster, written)
        weighed = weigh(h, meta, sim, model, measured)
    rewrite = weighed.advised and target is not None
    after = len(sim.rewritten) if sim is not None and sim.changes else None
    units_per_manifest = len(per_unit) / after if after else None
    measured = any(w.get("measured_ms") is not None for w in h.windows)
    predictions = [_prediction(w, weighed, sim is not None and sim.changes) for w in h.windows]
    name = source.name or PLACEHOLDER
    catalog, ident = (source.catalog, source.ident) if source.name else ("<catalog>", "<namespace>.<table>")
    statements: list[Statement] = []
    actions = []
    proposed = (
        _rewrite_statements(meta, name, catalog or "", ident or "", target, cluster, sim)
        if target and sim is not None and sim.changes
        else []
    )
    if rewrite and proposed:
        actions.append("rewrite_manifests")
        statements += proposed
    snaps = h.snapshots
    if snaps.get("expirable"):
        actions.append("expire_snapshots")
        older = utc_text(snaps["cutoff_us"])
        # A table sharing its location with another (a copy) must not delete files on expiry.
        if source.copy or h.orphans.get("shared"):
            statements.append(
                Statement(
                    "expire_snapshots",
                    "spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, "
                    f"'{name}').expireSnapshots().expireOlderThan({snaps['cutoff_us'] // 1000})"
                    f".retainLast({snaps['retain_last']}).cleanExpiredFiles(False).commit()",
                    "pyspark",
                    True,
                    f"drop {plural(snaps['expirable'], 'snapshot')} older than {snaps['retain']} from this "
                    "table's metadata only: it shares its files with another table, so none is deleted",
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
                    f"{plural(snaps['expirable'], 'snapshot')} older than {snaps['retain']} "
                    f"({snaps['retain_from']}), "
                    f"keeping the newest {snaps['retain_last']}, the current one and every branch or tag",
                )
            )
    notes = _notes(h, meta, source, catalog or "", ident or "", statements)
    # A stale calibration matters only where its absolute figures are shown: where nothing was measured.
    stale = model.stale_note() if model is not None and not measured else None
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
        bytes_per_entry=round(written.per_entry, 1),
        manifests_meant=meant.manifests if meant else None,
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
        proposed=proposed,
        basis=weighed.basis,
    )


def _prediction(w: dict[str, Any], weighed: Weighed, changes: bool) -> dict[str, Any]:
    """One window's row of the advice: what it reads and plans now, measured (or, where nothing
    was measured, predicted by the calibration), and after the simulated rewrite, anchored on the
    measured plans (`anchor`)."""
    row: dict[str, Any] = {
        "window": w["window"],
        "units": w["span_units"],
        "now_manifests": w["manifests"],
        "now_mb": round(w["manifest_bytes"] / 1e6, 3),
        "now_delete_manifests": w.get("delete_manifests", 0),
        "now_measured_ms": w.get("measured_ms"),
        "now_measured_range_ms": w.get("measured_range_ms"),
        "now_measured_plans": w.get("measured_plans", 0),
    }
    if w.get("measured_ms") is None:
        row |= {f"now_predicted_{k}": v for k, v in (w.get("predicted") or {}).items()}
    later = next((p for p in weighed.windows if p["window"] == w["window"]), None)
    if later is None or not changes:
        return row
    row |= {
        "after_manifests": later["after_manifests"],
        "after_mb": round(later["after_bytes"] / 1e6, 3),
        "after_predicted_ms": later.get("after_ms"),
        "after_range_ms": later.get("after_range_ms"),
        "after_basis": later.get("basis"),
        "ratio_predicted": later.get("ratio"),
        "model_ratios": later.get("model"),
        "after_ratio_ms": later.get("after_ratio_ms"),
        "after_split_ms": later.get("after_split_ms"),
        "fixed_measured_ms": later.get("fixed_measured_ms"),
    }
    return row | {k: later[k] for k in ("gain_ms", "error_ms", "noise_ms") if k in later}


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
            f"target {binary_text(target)} for the rewrite only (the next statement but one puts it back)",
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


class LostRace(Exception):
    """A statement of `--apply` whose commit lost to another writer's commit and had no retry
    left (Iceberg's CommitFailedException): Iceberg committed nothing of it. The restoring
    statements after it ran (`ran` holds them), the others did not (`skipped`)."""

    def __init__(self, statement: Statement, message: str, ran: list[dict[str, Any]], skipped: list[str]):
        super().__init__(message)
        self.statement, self.message, self.ran, self.skipped = statement, message, ran, skipped

    def line(self, table: str, retries: str) -> str:
        """The one line that says what happened and what changed."""
        what = WHAT.get(self.statement.action, self.statement.action)
        restored = any(a["action"] == "restore_target" for a in self.ran)
        text = (
            f"doctor {table}: --apply lost a commit race: another writer committed during {what}, "
            f"and {RETRIES_PROPERTY}={retries} left no retry (Iceberg: {self.message}); "
            f"{what} committed nothing, the other writer's commit stands"
        )
        if restored:
            text += ", the manifest target is back as it was"
        elif self.statement.action == "restore_target":
            text += f", so {TARGET_PROPERTY} is still the rewrite's: run that statement again"
        if self.skipped:
            text += f"; not run: {', '.join(self.skipped)}"
        return text + "; run it again"

    def as_json(self, retries: str) -> dict[str, Any]:
        return {
            "action": self.statement.action,
            "text": self.statement.text,
            "iceberg": self.message,
            "retries": retries,
            "skipped": self.skipped,
        }


def commit_conflict(exc: BaseException) -> str | None:
    """Iceberg's message when `exc` (a Py4J or PySpark error) is, or was caused by, a
    CommitFailedException: a commit that lost to another writer's with no retry left."""
    seen = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    for _ in range(20):  # the cause chain, not a cycle
        if seen is None:
            break
        if str(seen.getClass().getName()) == COMMIT_FAILED:
            message = str(seen.getMessage() or "").strip()
            return (message.splitlines() or [""])[0][:300]
        cause = seen.getCause()
        seen = None if cause is None or cause.equals(seen) else cause
    return None


def run_statements(
    spark: SparkSession,
    statements: list[Statement],
    journal_dir: Path | None = None,
    table: str = "",
    properties: dict[str, str] | None = None,
    failpoint: str = "doctor.apply",
) -> list[dict[str, Any]]:
    """Run the statements `--apply` runs, in order; what ran, how long each took and when. When one
    fails, the `restore_target` statements still to come run before the error goes up, so the
    table keeps its own manifest target. With `journal_dir`, the target as the table's
    `properties` hold it is written to a journal of `table` (`journal.identity`) first, fsynced,
    and the journal goes once the restoring statements have run: a process killed in between
    leaves it for the next doctor run to finish.

    Raises:
        LostRace: a statement's commit lost to another writer's with no retry left (Iceberg
            retries a lost commit `commit.retry.num-retries` times first), after the restoring
            statements ran.
    """
    ran = []
    pending = [st for st in statements if st.applies]
    path = None
    if journal_dir is not None and any(st.action == "restore_target" for st in pending):
        restore = {TARGET_PROPERTY: (properties or {}).get(TARGET_PROPERTY)}
        path = journal.begin(journal_dir, table, restore, [st.text for st in pending])
    try:
        while pending:
            st = pending[0]
            failpoints.point(failpoint)  # the kill tests' (doctor.apply; doctor.scratch on a copy)
            failpoints.oom("doctor.statement", spark)  # a statement that fails (the tests')
            failpoints.stall("doctor.statement", spark)  # a writer commits meanwhile (the tests')
            t0, started_ms = time.perf_counter(), time.time_ns() // 1_000_000
            _run(spark, st)
            pending.pop(0)
            ran.append(_ran(st, t0, started_ms))
    except Exception as exc:
        restored = []
        for st in pending[1:]:
            if st.action == "restore_target":
                t0, started_ms = time.perf_counter(), time.time_ns() // 1_000_000
                _run(spark, st)
                restored.append(_ran(st, t0, started_ms))
        if path is not None:
            journal.finish(path)
        conflict = commit_conflict(exc)
        if conflict is not None:
            skipped = [st.action for st in pending[1:] if st.action != "restore_target"]
            raise LostRace(pending[0], conflict, [*ran, *restored], skipped) from exc
        raise
    if path is not None:
        journal.finish(path)
    return ran


def _ran(st: Statement, t0: float, started_ms: int) -> dict[str, Any]:
    """What ran, how long it took, and when."""
    return {
        "action": st.action,
        "text": st.text,
        "language": st.language,
        "seconds": round(time.perf_counter() - t0, 3),
        # Wall clock, as Iceberg stamps a commit: which commit was this statement's.
        "ran_ms": [started_ms, time.time_ns() // 1_000_000],
    }


def put_back(spark: SparkSession, name: str) -> Any:
    """A callable setting a property of table `name` to a value, or unsetting it for None
    (`journal.recover`)."""

    def run(prop: str, value: str | None) -> None:
        if value is None:
            spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES IF EXISTS ('{prop}')").collect()
        else:
            spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('{prop}'='{value}')").collect()

    return run


def _run(spark: SparkSession, st: Statement) -> None:
    if st.language == "sql":
        spark.sql(st.text).collect()
    else:
        # The PySpark line built in `advise`, run as printed (no SQL procedure does this step).
        exec(st.text, {"spark": spark})
