"""The doctor's whole visit: reach the table, read its metadata, judge, advise, optionally apply
(on the table or a registered copy) and judge again; then the files (the console text: console.py).

Nothing is written to the table unless `apply` is set. A dry run reads metadata tables only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession

from icelab.core import run_state
from icelab.core.config import EngineConfig
from icelab.core.errors import UserError
from icelab.core.results import write_json, write_parquet
from icelab.health import journal
from icelab.health.advice import Advice, advise, put_back, register_copy, run_statements
from icelab.health.anchor import MIN_PLANS, fixed_window
from icelab.health.check import (
    Health,
    Policy,
    examine,
    manifests_frame,
    partitions_frame,
)
from icelab.health.commits import Interleaved, interleaved
from icelab.health.forecast import PlanningModel
from icelab.health.gain import MIN_GAIN_SHARE, decided
from icelab.health.manifest_bytes import written_sizes
from icelab.health.measured import (
    NOT_MEASURED,
    WARMUPS,
    driver_heap,
    measure_states,
    measure_windows,
    reset_heap_peak,
    state_of,
)
from icelab.health.reader import READER, Metadata, read
from icelab.health.rewrite import Sizes
from icelab.health.source import Source, connect, copy_of, load

EXIT_HEALTHY, EXIT_ACTION, EXIT_BAD_INPUT = 0, 1, 2
# `--apply` left some window planning more manifests than before (or slower beyond the model's error).
EXIT_WORSE = 4
# The state read at the rewrite's parent, when other writers committed before the rewrite.
BEFORE_REWRITE = "before_rewrite"
# report.json's `windows`: from the advice on the table as first read ...
WINDOW_KEYS = (
    "window",
    "now_manifests",
    "now_measured_ms",
    "now_measured_range_ms",
    "now_measured_plans",
    "now_predicted_ms",
    "after_predicted_ms",
    "after_range_ms",
    "after_basis",
    "ratio_predicted",
)
# ... and, after `--apply` or `--copy`, from the plans measured before and after it, interleaved.
APPLIED_KEYS = (
    "after_manifests",
    "before_measured_ms",
    "after_measured_ms",
    "after_measured_range_ms",
    "measured_plans",
    "ratio_measured",
    "worse",
)
# Table properties the report shows first (all of them are in report.json).
SHOWN_PROPERTIES = (
    "commit.manifest.target-size-bytes",
    "commit.manifest-merge.enabled",
    "commit.manifest.min-count-to-merge",
    "write.delete.mode",
    "write.update.mode",
    "write.merge.mode",
    "write.target-file-size-bytes",
    "history.expire.max-snapshot-age-ms",
    "history.expire.min-snapshots-to-keep",
)


@dataclass
class Visit:
    """One state the doctor looked at: the table (or copy) as read, its report and advice."""

    source: Source
    meta: Metadata
    health: Health
    advice: Advice
    written: Sizes | None = None  # bytes a rewrite writes (manifest_bytes.written_sizes)

    def readvise(self, model: PlanningModel | None, target: int | None) -> None:
        """The advice again, on the plans the windows hold now."""
        self.advice = advise(self.health, self.meta, self.source, model, target, self.written)


@dataclass
class Diagnosis:
    """Everything one doctor run found and did."""

    visits: list[Visit]
    load_seconds: float
    model: PlanningModel | None
    applied: list[dict[str, Any]] = field(default_factory=list)
    copy: str | None = None
    plan: Advice | None = None  # what was applied, naming the table it ran on (the copy's own)
    measure_plans: int = 0  # timed plans per window measured on the table (0: none)
    measure_budget_s: float | None = None  # seconds the measuring may take per table state (None: no limit)
    measure_warmups: int = WARMUPS  # untimed plans of each window before its timed ones
    seconds: float = 0.0  # the whole visit: reaching, reading, judging, measuring, applying
    heap: dict[str, int] = field(default_factory=dict)  # the driver's heap (measured.driver_heap)
    # After `--apply`: the windows before, planned again in the rounds that planned the state after.
    now_again: list[dict[str, Any]] = field(default_factory=list)
    # After `--apply`: the commits since the first read, the doctor's rewrite among them.
    commits: Interleaved | None = None

    @property
    def first(self) -> Visit:
        return self.visits[0]

    @property
    def last(self) -> Visit:
        return self.visits[-1]

    @property
    def before(self) -> Visit:
        """The state the rewrite is judged against: its parent when other writers committed
        between the first read and the rewrite (`commits`), else the first state."""
        return next((v for v in self.visits if v.health.state == BEFORE_REWRITE), self.first)

    def before_after(self) -> list[dict[str, Any]]:
        """Per window, once applied: manifests planned before, as simulated and after; planning
        measured before and after in the same interleaved rounds (before_measured_ms,
        after_measured_ms), the after predicted before applying (after_predicted_ms, anchored on
        the plans measured first), and the two ratios after/now; empty without `--apply`."""
        if len(self.visits) < 2:
            return []
        after = {w["window"]: w for w in self.last.health.windows}
        again = {w["window"]: w for w in self.now_again}
        predicted = {p["window"]: p for p in self.first.advice.predictions}
        rows = []
        for b in self.before.health.windows:
            a = after.get(b["window"])
            if a is None:
                continue
            p, n = predicted.get(b["window"], {}), again.get(b["window"], {})
            now_ms, after_ms = n.get("measured_ms"), a.get("measured_ms")
            row = {
                "window": b["window"],
                "before_manifests": b["manifests"],
                "predicted_manifests": p.get("after_manifests"),
                "after_manifests": a["manifests"],
                "before_measured_ms": now_ms,
                "before_measured_range_ms": n.get("measured_range_ms"),
                "after_predicted_ms": p.get("after_predicted_ms"),
                "after_predicted_range_ms": p.get("after_range_ms"),
                "after_basis": p.get("after_basis"),
                "after_ratio_ms": p.get("after_ratio_ms"),
                "after_split_ms": p.get("after_split_ms"),
                "fixed_measured_ms": p.get("fixed_measured_ms"),
                "after_measured_ms": after_ms,
                "after_measured_range_ms": a.get("measured_range_ms"),
                "measured_plans": min(n.get("measured_plans", 0), a.get("measured_plans", 0)),
                "ratio_predicted": p.get("ratio_predicted"),
                "ratio_measured": round(after_ms / now_ms, 4) if now_ms and after_ms is not None else None,
            }
            rows.append(row | {"worse": _worse(row)})
        return rows

    def windows(self) -> list[dict[str, Any]]:
        """Per window, the figures a user acts on (report.json's `windows`, docs/results.md): the
        plans measured now, the planning predicted after the advised rewrite and on what basis,
        and after `--apply` the plans measured before and after it, interleaved."""
        done = {r["window"]: r for r in self.before_after()}
        rows = []
        for p in self.first.advice.predictions:
            row = {k: p.get(k) for k in WINDOW_KEYS}
            row["after_manifests_simulated"] = p.get("after_manifests")
            r = done.get(p["window"], {})
            row |= {k: r.get(k) for k in APPLIED_KEYS}
            rows.append(row)
        return rows

    @property
    def worse(self) -> bool:
        """Whether what was applied left some window planning more manifests or slower."""
        return any(r["worse"] for r in self.before_after())

    @property
    def exit_code(self) -> int:
        """0 healthy, 1 an action is advised (a rewrite worth it, or expiry), for the last state;
        EXIT_WORSE when `--apply` made some window's plan worse."""
        if self.applied and self.worse:
            return EXIT_WORSE
        return EXIT_ACTION if self.last.advice.actions else EXIT_HEALTHY

    def report(self) -> dict[str, Any]:
        """report.json: the table, the reader and its timings, every state with its advice."""
        first = self.first
        meta = first.meta
        return {
            "table": {
                "given": first.source.given,
                "kind": first.source.kind,
                "name": first.source.name,
                "described": first.source.describe(),
                "location": meta.location,
                "metadata_file": meta.metadata_file,
                "format_version": meta.format_version,
                "current_snapshot_id": meta.current_snapshot_id,
                "specs": {str(k): s.describe() for k, s in meta.specs.items()},
                "default_spec_id": meta.default_spec_id,
                "properties": meta.properties,
            },
            "reader": {
                "name": READER,
                "entries_reader": meta.entries_reader,
                "entries_fallback": meta.entries_fallback,
                "manifests_read": meta.manifests_read,
                "load_seconds": round(self.load_seconds, 3),
                "read_seconds": round(meta.read_seconds, 3),
                "steps": meta.timings,
                "entries": int(
                    (first.health.manifests.entries + first.health.manifests.deleted_entries).sum()
                ),
                "manifests": len(first.health.manifests),
                "process_seconds": run_state.process_seconds(),
            },
            "planning_model": self.model.as_json() if self.model else None,
            "doctor": {
                "seconds": round(self.seconds, 3),
                "measure_plans": self.measure_plans,
                "measure_budget_s": self.measure_budget_s,
                "measure_warmups": self.measure_warmups if self.measure_plans else 0,
                **self.heap,
            },
            "states": [
                v.health.as_json()
                | {
                    "snapshot_id": v.meta.current_snapshot_id,
                    "rule_verdict": v.health.verdict,
                    "verdict": v.advice.verdict,
                    "why": v.advice.why,
                    "advice": v.advice.as_json(),
                }
                for v in self.visits
            ],
            "applied": self.applied,
            "commits": self.commits.as_json() if self.commits else None,
            "copy": self.copy,
            "windows": self.windows(),
            "before_after": self.before_after(),
            "worse": self.worse,
            "verdict": self.last.advice.verdict,
            "actions": self.last.advice.actions,
            "exit_code": self.exit_code,
        }


def visit(
    spark: SparkSession,
    source: Source,
    jtable: Any,
    state: str,
    policy: Policy,
    model: PlanningModel | None,
    target: int | None,
    measure_plans: int = 0,
    measure_budget_s: float | None = None,
    jar_name: str | None = None,
    measure_warmups: int = WARMUPS,
    snapshot_id: int | None = None,
) -> Visit:
    """Read one table state at one snapshot (`snapshot_id`, else the current one when the read
    begins), judge it, and time at least `measure_plans` plans of each window on it (after
    `measure_warmups` untimed rounds, within `measure_budget_s` seconds), more while the verdict
    is undecided (`gain.decided`); the advice rests on those plans."""
    meta = read(spark, source, jtable, policy.small_file_bytes, jar_name, snapshot_id)
    health = examine(meta, state, source.describe(), policy, model, copy=source.copy)
    written = written_sizes(spark, jtable, meta.format_version, meta.current_snapshot_id, jar_name=jar_name)
    found = Visit(source, meta, health, advise(health, meta, source, model, target, written), written)
    fixed = fixed_window(health.windows)
    if fixed is not None and measure_plans > 0:
        health.fixed = fixed
    ratios = {p["window"]: p.get("model_ratios") for p in found.advice.predictions}
    measure_windows(
        spark,
        source,
        meta,
        [*health.windows, *([fixed] if health.fixed else [])],
        measure_plans,
        measure_budget_s,
        measure_warmups,
        enough=lambda: decided(health, ratios),
    )
    found.readvise(model, target)
    return found


def diagnose(
    spark: SparkSession,
    engine: EngineConfig,
    source: Source,
    policy: Policy,
    model: PlanningModel | None,
    target: int | None = None,
    apply: bool = False,
    copy_to: str | None = None,
    force_rewrite: bool = False,
    journal_dir: Path | None = None,
    measure_plans: int = 0,
    measure_budget_s: float | None = None,
    measure_warmups: int = WARMUPS,
) -> Diagnosis:
    """Reach the table, judge it, and with `apply` run the advice and judge again.

    Args:
        source: the table as `source.resolve` gave it.
        copy_to: apply on a copy registered from the table's current metadata (a table read by
            its metadata file gets a Hadoop catalog on this directory); None applies in place.
        force_rewrite: with `apply` on a copy, rewrite it to the layout meant even when the advice
            is not to (the decision check measures what a rewrite the doctor declined would do).
        journal_dir: where `--apply` journals what it changes (`journal`); an unfinished journal
            of the table found there is finished first. None: no journal.
        measure_plans: timed plans of each window's count query on each state (0: none).
        measure_budget_s: seconds that measuring may take on each state (None: no limit;
            `measured.measure_windows`).
        measure_warmups: untimed plans of each window before its timed ones.

    Raises:
        UserError: unknown table, unreachable catalog, not an Iceberg table, or `apply` on a table
            that cannot take a commit.
    """
    t0 = time.perf_counter()
    reset_heap_peak(spark)
    source = connect(spark, engine, source)
    if apply and copy_to is None and not source.writable:
        raise UserError(
            f"'{source.given}' is read by its metadata file, so nothing can be committed to it: "
            "give --copy, or name the table through its catalog"
        )
    if journal_dir is not None and source.name:
        journal.recover(journal_dir, _identity(source), put_back(spark, source.name))
    jtable = load(spark, source)
    load_seconds = time.perf_counter() - t0
    first = visit(
        spark,
        source,
        jtable,
        "current",
        policy,
        model,
        target,
        measure_plans,
        measure_budget_s,
        engine.iceberg_jar,
        measure_warmups,
    )
    diagnosis = Diagnosis(
        [first],
        load_seconds,
        model,
        measure_plans=measure_plans,
        measure_budget_s=measure_budget_s,
        measure_warmups=measure_warmups,
    )
    force_rewrite = force_rewrite and copy_to is not None and bool(first.advice.proposed)
    if apply and (first.advice.actions or force_rewrite):
        _apply(spark, engine, source, jtable, policy, target, copy_to, diagnosis, force_rewrite, journal_dir)
    diagnosis.seconds = time.perf_counter() - t0
    diagnosis.heap = driver_heap(spark)
    return diagnosis


def _apply(
    spark: SparkSession,
    engine: EngineConfig,
    source: Source,
    jtable: Any,
    policy: Policy,
    target: int | None,
    copy_to: str | None,
    diagnosis: Diagnosis,
    force_rewrite: bool = False,
    journal_dir: Path | None = None,
) -> None:
    """Run the first state's advice (on a registered copy with `copy_to`; with `force_rewrite`,
    the rewrite to the layout meant too), then judge again."""
    first, model = diagnosis.first, diagnosis.model
    where, jwhere, copy = source, jtable, False
    if copy_to is not None:
        where = connect(spark, engine, copy_of(source, copy_to))
        if where.kind == "hadoop" and where.catalog and where.ident and "." in where.ident:
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {where.catalog}.{where.ident.rsplit('.', 1)[0]}")
        register_copy(spark, source, first.meta, where)
        if journal_dir is not None:
            # A copy of the same name an earlier killed --copy left: registered afresh, its journal goes.
            journal.finish(journal_dir / journal.key(_identity(where)))
        jwhere, copy = load(spark, where), True
        diagnosis.copy = where.name
    plan = advise(first.health, first.meta, where, model, target, first.written) if copy else first.advice
    diagnosis.plan = plan
    statements = plan.statements
    if force_rewrite and "rewrite_manifests" not in first.advice.actions:
        statements = [*plan.proposed, *statements]
    props = first.meta.properties
    diagnosis.applied = run_statements(spark, statements, journal_dir, _identity(where), props)
    rewrite_ran = next((a["ran_ms"] for a in diagnosis.applied if a["action"] == "rewrite_manifests"), None)
    # A copy is registered at the first read's snapshot; the table itself may have moved on.
    found = interleaved(jwhere, first.meta.current_snapshot_id, rewrite_ran)
    diagnosis.commits = found
    ours = found.ours
    if ours is not None and found.before:
        # Others committed before the rewrite: the rewrite is judged against its own parent.
        before = visit(
            spark,
            where,
            jwhere,
            BEFORE_REWRITE,
            policy,
            model,
            target,
            0,
            None,
            engine.iceberg_jar,
            snapshot_id=ours.parent_id,
        )
        diagnosis.visits.append(before)
    state = "after_apply (copy)" if copy else "after_apply"
    after = visit(
        spark,
        where,
        jwhere,
        state,
        policy,
        model,
        target,
        0,
        None,
        engine.iceberg_jar,
        snapshot_id=ours.snapshot_id if ours is not None else None,
    )
    diagnosis.visits.append(after)
    _measure_both(spark, diagnosis, after)
    after.readvise(model, target)


def _identity(source: Source) -> str:
    """What a journal knows the table by (`journal.identity`)."""
    return journal.identity(source.location, source.kind, source.uri, source.ident)


def _measure_both(spark: SparkSession, diagnosis: Diagnosis, after: Visit) -> None:
    """Plan the table before the rewrite (`Diagnosis.before`, at its snapshot) and after it, in
    the same interleaved rounds, so that both are measured alike in this session
    (`measured.measure_states`): the after state's windows, and `diagnosis.now_again`, the windows
    before, planned again."""
    before = diagnosis.before
    diagnosis.now_again = [
        {k: w[k] for k in ("window", "start_us", "end_us")} for w in before.health.windows if "start_us" in w
    ]
    if diagnosis.measure_plans <= 0:
        for w in diagnosis.now_again:
            w.update(NOT_MEASURED)
        return
    states = [
        state_of(spark, "now", before.source, before.meta, diagnosis.now_again),
        state_of(spark, "after", after.source, after.meta, after.health.windows),
    ]
    measure_states(
        spark,
        [s for s in states if s is not None],
        diagnosis.measure_plans,
        diagnosis.measure_budget_s,
        diagnosis.measure_warmups,
    )


def _worse(row: dict[str, Any]) -> bool:
    """Whether a window plans worse after `--apply`: more manifests, or, measured by MIN_PLANS plans
    each, slower beyond both intervals of the median plans and by MIN_GAIN_SHARE of its planning
    before (the advice's bar)."""
    if row["after_manifests"] > row["before_manifests"]:
        return True
    now, after = row["before_measured_ms"], row["after_measured_ms"]
    if now is None or after is None or row["measured_plans"] < MIN_PLANS:
        return False
    now_high = (row["before_measured_range_ms"] or [now, now])[1]
    after_low = (row["after_measured_range_ms"] or [after, after])[0]
    return after_low > now_high and after - now >= MIN_GAIN_SHARE * now


def save(run_dir: Path, diagnosis: Diagnosis) -> None:
    """report.json, partitions.parquet and manifests.parquet (one row per partition or manifest
    per state), written atomically."""
    parts = pd.concat([partitions_frame(v.health, v.meta) for v in diagnosis.visits], ignore_index=True)
    mans = pd.concat([manifests_frame(v.health, v.meta) for v in diagnosis.visits], ignore_index=True)
    write_parquet(run_dir / "partitions.parquet", parts)
    write_parquet(run_dir / "manifests.parquet", mans)
    write_json(run_dir / "report.json", diagnosis.report())
