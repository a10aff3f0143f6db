"""Task `metadata_scale`: planning at production file counts, on table states made of metadata
only (icelab.datagen.metadata): the data-file entries of the states in conf/meta/ (meta_36k up to meta_10m),
each manifest layout, each planning mode, every window. Planning only: the data files do not
exist, so no query executes.

Writes, under results/runs/metadata_scale/<run_id>/: measurements.parquet (the contract; the
`dataset` column names the state, `setup` the planning mode), states.csv (per state and layout:
files, manifests, bytes, entry size, build time, disk), windows.csv (per state, layout and
window: the manifests whose day range meets the window, their bytes and entries: what planning
must read, and the entries of the largest of them, which one worker thread reads alone),
with `experiment.model_inputs` model_inputs.csv (the cost model's inputs per state, layout and
window, read from each table's metadata as the doctor reads it: icelab.experiments.model_inputs),
summary.csv, env.json, config.yaml, run.json and the charts.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from omegaconf import DictConfig
from pyspark.sql import SparkSession

from icelab.analysis import stats
from icelab.bench.context import open_context
from icelab.bench.measure import plan_query
from icelab.bench.protocol import Case, cases
from icelab.bench.recorder import Recorder
from icelab.bench.variants import NO_PROFILE, Variant, settings
from icelab.bench.windows import Window, load_query, parse_window
from icelab.charts import chart_files
from icelab.charts import costmodel as costmodel_charts
from icelab.core import run_state
from icelab.core.config import paths_config, protocol_config
from icelab.core.config.metadata import MetadataScaleConfig, meta_configs, metadata_scale_config
from icelab.core.jvm import jvm_pid
from icelab.core.results import write_csv
from icelab.datagen.metadata.state import MetaState, ensure, meta_root, register, store_root
from icelab.experiments import model_inputs

PLANNING_MODE = "spark.sql.iceberg.data-planning-mode"
LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
# Serial: the driver lists every partition directory itself; parallel: Spark's default, a
# listing job once more than 32 paths are listed.
LISTING = {"serial": str(2**31 - 1), "parallel": "32"}
PLANNING_ONLY = "planning only: these table states hold metadata, not data files; no query is executed"


@dataclass(frozen=True)
class MetaVariant(Variant):
    """A variant named by its state's layout and its planning mode (`iceberg/as_ingested/local`)."""

    name: str = ""

    @property
    def label(self) -> str:
        """The name given: unique within a state."""
        return self.name


def meta_variants(state: MetaState) -> list[Variant]:
    """Parquet per listing mode, then each measured Iceberg layout per planning mode."""
    found: list[Variant] = []
    if state.has_parquet:
        for mode in state.size.listing:
            found.append(
                MetaVariant(
                    "parquet",
                    NO_PROFILE,
                    state.parquet_table,
                    {LISTING_THRESHOLD: LISTING[mode]},
                    setup=f"listing_{mode}",
                    name=f"parquet/listing_{mode}",
                )
            )
    measured = state.size.measured_layouts or state.layouts
    for layout_name in (name for name in state.layouts if name in measured):
        for mode in state.size.modes:
            planning = "distributed" if mode == "distributed" else "local"
            found.append(
                MetaVariant(
                    "iceberg",
                    layout_name,
                    state.table(layout_name, cached=mode == "local_cache"),
                    {PLANNING_MODE: planning},
                    setup=mode,
                    name=f"iceberg/{layout_name}/{mode}",
                )
            )
    return found


def state_windows(state: MetaState, names: list[str]) -> list[Window]:
    """The windows, ending where the state's days end."""
    end = dt.datetime.combine(state.experiment.end, dt.time())
    return [parse_window(name, end, dt.timedelta(days=state.size.days)) for name in names]


# Where the time field sits in each partitioning's tuple, and how long one of its values lasts.
TIME_FIELD = {"day": 0, "hour": 0, "month": 0, "identity_day": 1, "bucket_day": 1}


def partition_span(value: str, partitioning: str) -> tuple[dt.datetime, dt.datetime]:
    """[start, stop) of a time partition from its human string: `2026-01-31`, `2026-01-31-05`
    (an hour), `2026-01` (a month)."""
    if partitioning == "hour":
        start = dt.datetime.strptime(value, "%Y-%m-%d-%H")
        return start, start + dt.timedelta(hours=1)
    if partitioning == "month":
        start = dt.datetime.strptime(value, "%Y-%m")
        return start, (start + dt.timedelta(days=32)).replace(day=1)
    start = dt.datetime.combine(dt.date.fromisoformat(value), dt.time())
    return start, start + dt.timedelta(days=1)


def manifest_ranges(spark: SparkSession, table: str, partitioning: str = "day") -> pd.DataFrame:
    """Each manifest of the current snapshot: content (0 data, 1 deletes), bytes, live entries,
    and the [start, stop) its time partitions span."""
    # The whole partition_summaries column: Iceberg cannot project part of a list's struct.
    found = spark.sql(
        f"SELECT content, length, added_data_files_count + existing_data_files_count "
        f"+ added_delete_files_count + existing_delete_files_count AS entries, "
        f"partition_summaries FROM {table}.manifests"
    ).collect()
    at = TIME_FIELD[partitioning]
    spans = [
        (
            partition_span(r["partition_summaries"][at]["lower_bound"], partitioning)[0],
            partition_span(r["partition_summaries"][at]["upper_bound"], partitioning)[1],
        )
        for r in found
    ]
    rows = pd.DataFrame(
        {
            "content": [r["content"] for r in found],
            "length": [r["length"] for r in found],
            "entries": [r["entries"] for r in found],
            "start": [lo for lo, _ in spans],
            "stop": [hi for _, hi in spans],
        }
    )
    return rows


def window_reads(
    state: MetaState, layout_name: str, manifests: pd.DataFrame, windows: list[Window]
) -> list[dict]:
    """Per window, what planning must read: the data manifests whose time range meets the window
    (a bucket or category field before the time prunes nothing: the windows filter time only),
    and the delete manifests that do."""
    out = []
    for window in windows:
        met = manifests[(manifests["start"] < window.end) & (manifests["stop"] > window.start)]
        hit, deletes = met[met["content"] == 0], met[met["content"] != 0]
        out.append(
            {
                "dataset": state.label,
                "profile": layout_name,
                "window": window.name,
                "manifests_read": len(hit),
                "manifest_bytes_read": int(hit["length"].sum()),
                "entries_read": int(hit["entries"].sum()),
                # Iceberg's worker pool reads manifests in parallel, each on one thread: a plan
                # lasts at least as long as its largest manifest takes (docs/costmodel.md).
                "largest_manifest_entries": int(hit["entries"].max()) if len(hit) else 0,
                "delete_manifests_read": len(deletes),
                "delete_entries_read": int(deletes["entries"].sum()),
            }
        )
    return out


def warm_cases(
    state: MetaState,
    smallest: MetaState,
    measures: dict[str, tuple[list[Window], list[Variant]]],
    reads: list[dict[str, Any]],
    query: str,
) -> list[Case]:
    """What a new session plans, untimed, before its first measurement of `state`, so that
    measurement finds the planning code compiled, as a cell measured late in a long session does.

    A state measured in one long session (a new one only after a JVM was ended): every variant
    of the smallest state at its first window (a second or so). A state measured one JVM per
    cell (fresh_jvm: 10M) is measured in new JVMs only, so a warm-up on another state's few
    thousand entries leaves the JIT cold for it (its 1-day plans on a rewritten layout were timed
    markedly slower than the same plan later in one session: docs/history-metadata-scale.md): its own
    cheapest layout (fewest entries read at its first window) in every mode, and its Parquet
    variants, at its first window.
    """
    if not state.size.fresh_jvm and not smallest.size.fresh_jvm:
        windows, variants = measures[smallest.name]
        return cases([query], windows[:1], variants)
    windows, variants = measures[state.name]
    first = windows[0].name
    own = {
        r["profile"]: r["entries_read"] for r in reads if (r["dataset"], r["window"]) == (state.label, first)
    }
    cheapest = min(own, key=lambda layout: own[layout]) if own else None
    variants = [v for v in variants if v.format != "iceberg" or v.profile == cheapest]
    return cases([query], windows[:1], variants)


class RoundGroup(NamedTuple):
    """Cases of a state measured alike; `single`: those over `single_round_entries`."""

    cases: list[Case]
    warmups: int
    repetitions: int
    single: bool


def round_groups(
    state: MetaState, windows: list[Window], variants: list[Variant], reads: list[dict], query: str
) -> list[RoundGroup]:
    """The state's cases in groups measured alike (warm-ups and repetitions per group).

    A cell whose plan reads more entries than `single_round_entries` (from `reads`, known
    before any measurement) is measured once with no warm-up; the other cells get the state's
    `warmups` and `repetitions`, so that at 10M the plans of seconds are measured more than once
    and those of minutes are not.
    """
    limit = state.size.single_round_entries
    read = {(r["profile"], r["window"]): r["entries_read"] for r in reads if r["dataset"] == state.label}

    def heavy(case: Case) -> bool:
        return (
            limit is not None
            and case.variant.format == "iceberg"
            and read[(case.variant.profile, case.window.name)] > limit
        )

    every = cases([query], windows, variants)
    groups = [
        RoundGroup([c for c in every if not heavy(c)], state.size.warmups, state.size.repetitions, False),
        RoundGroup([c for c in every if heavy(c)], 0, 1, True),
    ]
    return [group for group in groups if group.cases]


def state_rows(state: MetaState, info: dict[str, Any]) -> list[dict[str, Any]]:
    """states.csv rows: one per Iceberg layout, one for the Parquet tree."""
    rows = []
    for name, built in info["layouts"].items():
        rows.append(
            {
                "dataset": state.label,
                "format": "iceberg",
                "profile": name,
                "data_files": info["data_files"],
                "days": info["days"],
                "manifests": built["manifests"],
                "manifest_bytes": built["manifest_bytes"],
                "entry_bytes": built["manifest_bytes"] / built["entries"],
                "commits": built["commits"],
                "build_s": built["wall_s"],
                "target": built.get("target"),
            }
        )
    if info["parquet_files"]:
        rows.append(
            {
                "dataset": state.label,
                "format": "parquet",
                "profile": NO_PROFILE,
                "data_files": info["parquet_files"],
                "days": info["days"],
            }
        )
    return rows


def report(summary: pd.DataFrame, order: list[str]) -> str:
    """Per state: median planning ms per variant and window, and manifests scanned / total."""
    lines = [PLANNING_ONLY]
    for dataset, part in summary.groupby("dataset", sort=False):
        cells = part.assign(
            cell=[
                f"{v:,.0f}{'~' if u else ''}"
                for v, u in zip(part["planning_ms_median"], part["planning_ms_unstable"], strict=True)
            ]
        )
        cols = [w for w in order if w in set(part["window"])]
        table = cells.pivot(index="variant", columns="window", values="cell")[cols]
        lines += [f"{dataset}: median planning ms (~ may be unstable)", table.to_string(), ""]
        ice = part[part["format"] == "iceberg"].drop_duplicates(["profile", "window"])
        if not ice.empty:
            ice = ice.assign(
                cell=[
                    f"{s:,.0f}/{t:,.0f}"
                    for s, t in zip(ice["manifests_scanned"], ice["manifests_total"], strict=True)
                ]
            )
            table = ice.pivot(index="profile", columns="window", values="cell")[cols]
            lines += [f"{dataset}: manifests scanned / total", table.to_string(), ""]
    return "\n".join(lines)


def built_line(state: MetaState, info: dict[str, Any]) -> str:
    """One line per state: entries, manifests per layout, build time, disk."""
    layouts = ", ".join(
        f"{name} {b['manifests']:,} manifests ({b['manifest_bytes'] / 1e6:,.0f} MB, "
        f"{b['manifest_bytes'] / b['entries']:.0f} B/entry)"
        for name, b in info["layouts"].items()
    )
    return (
        f"{state.label}: {info['data_files']:,} entries; {layouts}; "
        f"Parquet placeholders {info['parquet_files']:,}; built in {info['build_wall_s'] / 60:.1f} min; "
        + (f"on {state.store}" if state.store else f"{info['disk_bytes'] / 1e9:.2f} GB on disk; {state.path}")
    )


@run_state.tracked
def run(cfg: DictConfig) -> Path | None:
    """Build (or reuse) every selected state, then measure planning on each.

    Returns:
        The run directory.
    """
    mcfg: MetadataScaleConfig = metadata_scale_config(cfg)
    sizes, protocol = meta_configs(cfg), protocol_config(cfg)
    load_query(mcfg.query)  # an unknown query, or states off local disk, fail before Spark starts
    paths = paths_config(cfg)
    meta_root(mcfg, paths.data_dir, paths.copy_from)
    # On a store the states are built there from the template on local disk (paths.copy_from),
    # which is neither copied nor verified on the store: nothing measured reads it there.
    on_store = store_root(paths.data_dir) is not None
    ctx = open_context(cfg, dataset_dir=paths.copy_from if on_store else None)
    built = ctx.dataset()  # the template: the real entries the states copy
    progress = bool(cfg.progress)
    states = [
        MetaState.of(name, size, mcfg, built.dataset, ctx.paths.data_dir, ctx.paths.copy_from)
        for name, size in sizes.items()
    ]
    infos = {s.name: ensure(ctx.spark, s, ctx.engine, bool(cfg.force), progress) for s in states}
    if mcfg.build_only:
        for state in states:
            print(built_line(state, infos[state.name]))
        return None
    run_dir = ctx.new_run(mcfg.name, built)
    base = {"run_id": run_dir.name, "experiment": mcfg.name}
    # What each state measures, decided once: the plan recorded is the plan run.
    measures = {
        s.name: (state_windows(s, list(s.size.windows or mcfg.windows)), meta_variants(s)) for s in states
    }
    plan = {
        s.label: {
            "windows": [w.name for w in measures[s.name][0]],
            "variants": [v.label for v in measures[s.name][1]],
        }
        for s in states
    }
    # What each layout's plan reads per window, from its manifests: known before measuring.
    reads = []
    for state in states:
        windows = measures[state.name][0]
        for layout_name in state.layouts:
            manifests = manifest_ranges(ctx.spark, state.table(layout_name), state.size.partitioning)
            reads += window_reads(state, layout_name, manifests, windows)
    groups = {s.name: round_groups(s, *measures[s.name], reads, mcfg.query) for s in states}
    planned = sum(len(g.cases) * (g.warmups + g.repetitions) for found in groups.values() for g in found)
    recorder = Recorder(
        run_dir,
        {
            **base,
            "dataset": built.dataset.config.name + "-" + built.dataset.hash,
            "planning_only": True,
            "planned_rows": planned,
            "states": {s.label: infos[s.name] for s in states},
            "plan": plan,
            "query": mcfg.query,
            "protocol": protocol.model_dump(),
        },
    )
    print(f"{mcfg.name}: {PLANNING_ONLY} -> {run_dir}")

    smallest = min(states, key=lambda s: s.size.data_files)

    def reopener(warm: list[Case]) -> Callable[[], SparkSession]:
        """A new session that plans `warm` untimed before its first measurement."""

        def reopen() -> SparkSession:
            # The states' catalogs and Parquet tables live in the session: registered again.
            spark = ctx.reopen()
            for state in states:
                register(spark, state, ctx.engine)
            for case in warm:
                with settings(spark, case.variant):
                    plan_query(spark, case.sql)
            print(
                f"{mcfg.name}: measuring on in a new session (driver JVM pid {jvm_pid()}; "
                f"{len(warm)} untimed plans first: {', '.join(sorted({c.variant.label for c in warm}))})",
                file=sys.stderr,
            )
            return spark

        return reopen

    write_csv(run_dir / "windows.csv", pd.DataFrame(reads))
    if mcfg.model_inputs:
        found = [row for s in states for row in model_inputs.state_inputs(ctx.spark, s, measures[s.name][0])]
        write_csv(run_dir / model_inputs.FILE, pd.DataFrame(found))
    state_table = []
    for state in states:
        windows, variants = measures[state.name]
        state_table += state_rows(state, infos[state.name])
        heavy = f" reading over {state.size.single_round_entries or 0:,} entries"
        rounds = ", ".join(
            f"{len(g.cases)} cells{heavy * g.single} x {g.warmups + g.repetitions} round"
            + "s" * (g.warmups + g.repetitions > 1)
            for g in groups[state.name]
        )
        print(
            f"{state.label}: {len(variants)} variants x {len(windows)} windows: {rounds}"
            + (", each measurement in a new driver JVM (fresh_jvm)" if state.size.fresh_jvm else "")
        )
        reopen = reopener(warm_cases(state, smallest, measures, reads, mcfg.query))
        for group in groups[state.name]:
            recorder.record(
                ctx.spark,
                group.cases,
                protocol.model_copy(
                    update={
                        "warmups": group.warmups,
                        "repetitions": group.repetitions,
                        "executions": 0,
                        "warmups_execute": False,
                        "steady_k": 0,
                    }
                ),
                base | {"dataset": state.label},
                progress,
                reopen=reopen,
                fresh_jvm=state.size.fresh_jvm,
            )
        write_csv(run_dir / "states.csv", pd.DataFrame(state_table))
    recorder.close()
    measurements = pd.DataFrame(recorder.rows)
    summary = pd.concat(
        [
            stats.summarize(part, protocol.unstable_iqr).assign(dataset=name)
            for name, part in measurements.groupby("dataset", sort=False)
        ],
        ignore_index=True,
    )
    write_csv(run_dir / "summary.csv", summary)
    charts = chart_files(costmodel_charts.charts(run_dir))
    print(report(summary, list(mcfg.windows)))
    print(f"results: {run_dir} ({len(recorder.rows)} rows; charts: {', '.join(p.name for p in charts)})")
    return run_dir
