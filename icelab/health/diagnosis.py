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
from icelab.health.advice import (
    RETRIES_DEFAULT,
    RETRIES_PROPERTY,
    Advice,
    LostRace,
    advise,
    put_back,
    run_statements,
)
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
from icelab.health.gain import decided, measured_slower
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
from icelab.health.scratch import open_copy, sweep
from icelab.health.source import Source, connect, is_local, load

EXIT_HEALTHY, EXIT_ACTION, EXIT_BAD_INPUT = 0, 1, 2
# `--apply` left some window planning more manifests than before (or slower beyond the model's error).
EXIT_WORSE = 4
# `--apply` lost a commit race to another writer with no retry left: nothing of that statement
# committed, the manifest target is put back (docs/exit-codes.md).
EXIT_LOST_RACE = 5
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

    def readvise(
        self, model: PlanningModel | None, target: int | None, measured: list[dict[str, Any]] | None = None
    ) -> None:
        """The advice again, on the plans the windows hold now (and the rewrite `measured` on a
        scratch copy, where it was)."""
        self.advice = advise(self.health, self.meta, self.source, model, target, self.written, measured)


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
    # The scratch copy rewritten to the layout meant (`scratch`), as read after the rewrite; with
    # `--copy` it is the last state too. None where nothing was measured on a copy.
    scratch: Visit | None = None
    # How the scratch copy went: where, kept or removed, its rounds of plans, its time split.
    scratch_info: dict[str, Any] = field(default_factory=dict)
    rounds: dict[str, Any] = field(default_factory=dict)  # how the table alone was planned (no copy)
    # After `--apply` lost a commit race (`advice.LostRace`): which statement, Iceberg's message,
    # the retries the table allowed, what did not run; and the one line that says so.
    lost_race: dict[str, Any] | None = None
    lost_race_line: str | None = None

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
        return self._pairs(self.before, self.last, self.now_again)

    def measured_after(self) -> list[dict[str, Any]]:
        """`before_after`'s rows for the rewrite measured on the scratch copy: the table as first
        read against the copy, planned in the same rounds; empty where no copy was measured."""
        if self.scratch is None:
            return []
        return self._pairs(self.first, self.scratch, self.first.health.windows)

    def _pairs(self, before: Visit, last: Visit, now_again: list[dict[str, Any]]) -> list[dict[str, Any]]:
        after = {w["window"]: w for w in last.health.windows}
        again = {w["window"]: w for w in now_again}
        predicted = {p["window"]: p for p in self.first.advice.predictions}
        rows = []
        for b in before.health.windows:
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
        done = {r["window"]: r for r in self.before_after() or self.measured_after()}
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
        """Whether what was applied left some window planning more manifests or slower (on a
        copy, a rewrite the doctor declined does not count: that is why it declined it)."""
        if self.copy and "rewrite_manifests" not in self.first.advice.actions:
            return False
        return any(r["worse"] for r in self.before_after())

    @property
    def exit_code(self) -> int:
        """0 healthy, 1 an action is advised (a rewrite worth it, or expiry), for the last state;
        EXIT_WORSE when `--apply` made some window's plan worse; EXIT_LOST_RACE when it lost a
        commit race."""
        if self.lost_race is not None:
            return EXIT_LOST_RACE
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
            "lost_race": self.lost_race,
            "commits": self.commits.as_json() if self.commits else None,
            "copy": self.copy,
            "scratch": self.scratch_info or None,
            "rounds": self.rounds or None,
            "basis": self.first.advice.basis,
            "windows": self.windows(),
            "before_after": self.before_after(),
            "measured_after": self.measured_after(),
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
    jar_name: str | None = None,
    snapshot_id: int | None = None,
) -> Visit:
    """Read one table state at one snapshot (`snapshot_id`, else the current one when the read
    begins), judge it and advise on it; nothing is planned (`_measure_first`, `_measure_pair`)."""
    meta = read(spark, source, jtable, policy.small_file_bytes, jar_name, snapshot_id)
    health = examine(meta, state, source.describe(), policy, model, copy=source.copy)
    written = written_sizes(spark, jtable, meta.format_version, meta.current_snapshot_id, jar_name=jar_name)
    return Visit(source, meta, health, advise(health, meta, source, model, target, written), written)


def diagnose(
    spark: SparkSession,
    engine: EngineConfig,
    source: Source,
    policy: Policy,
    model: PlanningModel | None,
    target: int | None = None,
    apply: bool = False,
    copy: bool = False,
    scratch_dir: Path | None = None,
    keep_copy: bool = False,
    journal_dir: Path | None = None,
    measure_plans: int = 0,
    measure_budget_s: float | None = None,
    measure_warmups: int = WARMUPS,
) -> Diagnosis:
    """Reach the table, judge it on its simulated rewrite measured on a scratch copy, and with
    `apply` run the advice on the table and judge again.

    Args:
        source: the table as `source.resolve` gave it.
        apply: run the advice on the table itself, then judge again.
        copy: run the whole advice (expiry too) on the scratch copy, and judge the copy after it
            as the last state; the table is not changed.
        scratch_dir: where scratch copies go (`scratch`); None: nothing is measured on a copy,
            and the "after" is predicted.
        keep_copy: leave the scratch copy in place (its directory is in `scratch_info`).
        journal_dir: where `--apply` journals what it changes (`journal`); an unfinished journal
            of the table found there is finished first. None: no journal.
        measure_plans: timed plans of each window's count query on each state (0: none); the
            rewrite is measured on a copy from MIN_PLANS plans, until steady.
        measure_budget_s: seconds that measuring may take on each state (None: no limit;
            `measured.measure_windows`).
        measure_warmups: untimed plans of each window before its timed ones.

    Raises:
        UserError: unknown table, unreachable catalog, not an Iceberg table, `apply` on a table
            that cannot take a commit, or a scratch copy that cannot be written.
    """
    t0 = time.perf_counter()
    reset_heap_peak(spark)
    source = connect(spark, engine, source)
    if apply and not source.writable:
        raise UserError(
            f"'{source.given}' is read by its metadata file, so nothing can be committed to it: "
            "give --copy, or name the table through its catalog"
        )
    if journal_dir is not None and source.name:
        journal.recover(journal_dir, _identity(source), put_back(spark, source.name))
    if scratch_dir is not None:
        sweep(scratch_dir)  # the copies killed runs left
    jtable = load(spark, source)
    load_seconds = time.perf_counter() - t0
    first = visit(spark, source, jtable, "current", policy, model, target, jar_name=engine.iceberg_jar)
    diagnosis = Diagnosis(
        [first],
        load_seconds,
        model,
        measure_plans=measure_plans,
        measure_budget_s=measure_budget_s,
        measure_warmups=measure_warmups,
    )
    measurable = measure_plans >= MIN_PLANS and bool(first.advice.proposed) and bool(first.health.windows)
    if scratch_dir is not None and (measurable or (copy and (first.advice.proposed or first.advice.actions))):
        _on_scratch(spark, engine, source, jtable, policy, target, diagnosis, scratch_dir, copy, keep_copy)
    else:
        _measure_first(spark, diagnosis, target)
    if apply and first.advice.actions:
        _apply(spark, source, jtable, policy, target, diagnosis, engine.iceberg_jar, journal_dir)
    diagnosis.seconds = time.perf_counter() - t0
    diagnosis.heap = driver_heap(spark)
    return diagnosis


def _measure_first(spark: SparkSession, diagnosis: Diagnosis, target: int | None) -> None:
    """Plan the windows of the table as first read (and its fixed plan), then advise again on
    those plans. From MIN_PLANS plans a window the rounds go on until steady: the first rounds of
    a session run slow, and a fixed part taken from them made the predicted "after" too slow
    (docs/history.md, "The doctor's fixed part, measured on a table and on its rewritten copy").
    With fewer, more while the predicted verdict is undecided (`gain.decided`)."""
    first, plans = diagnosis.first, diagnosis.measure_plans
    health = first.health
    fixed = fixed_window(health.windows)
    if fixed is not None and plans > 0:
        health.fixed = fixed
    ratios = {p["window"]: p.get("model_ratios") for p in first.advice.predictions}
    rounds = measure_windows(
        spark,
        first.source,
        first.meta,
        [*health.windows, *([fixed] if health.fixed else [])],
        plans,
        diagnosis.measure_budget_s,
        diagnosis.measure_warmups,
        enough=lambda: decided(health, ratios),
        until_steady=plans >= MIN_PLANS,
    )
    diagnosis.rounds = rounds
    first.readvise(diagnosis.model, target)


def _on_scratch(
    spark: SparkSession,
    engine: EngineConfig,
    source: Source,
    jtable: Any,
    policy: Policy,
    target: int | None,
    diagnosis: Diagnosis,
    scratch_dir: Path,
    copy: bool,
    keep_copy: bool,
) -> None:
    """Rewrite a scratch copy to the layout meant (with `copy`, run the advised expiry there too),
    plan the table and the copy in the same rounds until steady, and advise on what was measured.
    The copy is removed at the end unless `keep_copy`."""
    first, model = diagnosis.first, diagnosis.model
    split: dict[str, float] = {"read": round(first.meta.read_seconds + diagnosis.load_seconds, 3)}
    t0 = time.perf_counter()
    scratch = open_copy(spark, engine, source, jtable, first.meta.metadata_file or "", scratch_dir, keep_copy)
    split["scratch_register"] = round(time.perf_counter() - t0, 3)
    info: dict[str, Any] = {"directory": str(scratch.root), "table": scratch.source.name, "kept": keep_copy}
    if not is_local(first.meta.location):
        # The copy lives under the results directory: its rewritten manifests are read locally.
        info["note"] = (
            f"the table's manifests are at {first.meta.location.split('://')[0]}://, the copy's rewritten "
            "ones on local disk: the after leaves out the store's round trips per manifest"
        )
    try:
        plan = advise(first.health, first.meta, scratch.source, model, target, first.written)
        ran = [*plan.proposed, *(s for s in plan.statements if copy and s.action == "expire_snapshots")]
        t0 = time.perf_counter()
        applied = run_statements(spark, ran, failpoint="doctor.scratch")
        split["scratch_rewrite"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        state = "after_apply (copy)" if copy else "after rewrite (scratch copy)"
        jar = engine.iceberg_jar
        after = visit(spark, scratch.source, scratch.jtable, state, policy, model, target, jar_name=jar)
        split["scratch_read"] = round(time.perf_counter() - t0, 3)
        diagnosis.scratch = after
        diagnosis.now_again = first.health.windows
        rounds = _measure_pair(spark, diagnosis, first, after)
        split["planning_rounds"] = rounds.pop("seconds", 0.0)
        info |= rounds
        first.readvise(model, target, diagnosis.measured_after())
        after.readvise(model, target)
        if copy:
            plan.statements = ran
            diagnosis.visits.append(after)
            diagnosis.applied, diagnosis.plan, diagnosis.copy = applied, plan, scratch.source.name
    finally:
        t0 = time.perf_counter()
        if keep_copy:
            scratch.release()
        else:
            scratch.remove()
        split["scratch_remove"] = round(time.perf_counter() - t0, 3)
        diagnosis.scratch_info = info | {"seconds": split}


def _apply(
    spark: SparkSession,
    source: Source,
    jtable: Any,
    policy: Policy,
    target: int | None,
    diagnosis: Diagnosis,
    jar_name: str | None,
    journal_dir: Path | None = None,
) -> None:
    """Run the first state's advice on the table, then judge again. A statement that lost a
    commit race with no retry left (`LostRace`) is recorded with the commits that landed; there
    is no state after to judge (the table is as the other writer left it)."""
    first, model = diagnosis.first, diagnosis.model
    diagnosis.plan = first.advice
    try:
        diagnosis.applied = run_statements(
            spark, first.advice.statements, journal_dir, _identity(source), first.meta.properties
        )
    except LostRace as lost:
        retries = first.meta.properties.get(RETRIES_PROPERTY, RETRIES_DEFAULT)
        diagnosis.applied = lost.ran
        diagnosis.lost_race = lost.as_json(retries)
        diagnosis.lost_race_line = lost.line(source.name or source.given, retries)
        diagnosis.commits = interleaved(jtable, first.meta.current_snapshot_id, None)
        return
    rewrite_ran = next((a["ran_ms"] for a in diagnosis.applied if a["action"] == "rewrite_manifests"), None)
    found = interleaved(jtable, first.meta.current_snapshot_id, rewrite_ran)
    diagnosis.commits = found
    ours = found.ours
    if ours is not None and found.before:
        # Others committed before the rewrite: the rewrite is judged against its own parent.
        parent = ours.parent_id
        before = visit(spark, source, jtable, BEFORE_REWRITE, policy, model, target, jar_name, parent)
        diagnosis.visits.append(before)
    snapshot = ours.snapshot_id if ours is not None else None
    after = visit(spark, source, jtable, "after_apply", policy, model, target, jar_name, snapshot)
    diagnosis.visits.append(after)
    before = diagnosis.before
    diagnosis.now_again = [
        {k: w[k] for k in ("window", "start_us", "end_us")} for w in before.health.windows if "start_us" in w
    ]
    _measure_pair(spark, diagnosis, before, after, diagnosis.now_again)
    after.readvise(model, target)


def _identity(source: Source) -> str:
    """What a journal knows the table by (`journal.identity`)."""
    return journal.identity(source.location, source.kind, source.uri, source.ident)


def _measure_pair(
    spark: SparkSession,
    diagnosis: Diagnosis,
    before: Visit,
    after: Visit,
    now_windows: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Plan `before` (its windows, or `now_windows` planned again at its snapshot) and `after` in
    the same interleaved rounds, each with its fixed plan, until steady where there are MIN_PLANS
    plans a window (`measured.measure_states`), so both are measured alike in this session; how
    the rounds went."""
    now = before.health.windows if now_windows is None else now_windows
    if diagnosis.measure_plans <= 0:
        for w in [*now, *after.health.windows]:
            w.update(NOT_MEASURED)
        return {"rounds": 0, "stopped": None, "seconds": 0.0}
    states = []
    for label, seen, windows in (("now", before, now), ("after", after, after.health.windows)):
        # Each state's fixed plan too: what the plan of a window holding no data costs on each layout.
        fixed = fixed_window(windows) if label == "after" or now_windows is None else None
        if fixed is not None:
            seen.health.fixed = fixed
        states.append(state_of(spark, label, seen.source, seen.meta, [*windows, *([fixed] if fixed else [])]))
    return measure_states(
        spark,
        [s for s in states if s is not None],
        diagnosis.measure_plans,
        diagnosis.measure_budget_s,
        diagnosis.measure_warmups,
        until_steady=diagnosis.measure_plans >= MIN_PLANS,
    )


def _worse(row: dict[str, Any]) -> bool:
    """Whether a window plans worse after a rewrite: more manifests, or, measured, slower beyond
    both intervals of the median plans and by MIN_GAIN_SHARE of its planning before (`gain`)."""
    return row["after_manifests"] > row["before_manifests"] or measured_slower(row)


def save(run_dir: Path, diagnosis: Diagnosis) -> None:
    """report.json, partitions.parquet and manifests.parquet (one row per partition or manifest
    per state), written atomically."""
    parts = pd.concat([partitions_frame(v.health, v.meta) for v in diagnosis.visits], ignore_index=True)
    mans = pd.concat([manifests_frame(v.health, v.meta) for v in diagnosis.visits], ignore_index=True)
    write_parquet(run_dir / "partitions.parquet", parts)
    write_parquet(run_dir / "manifests.parquet", mans)
    write_json(run_dir / "report.json", diagnosis.report())
