"""docs/canonical.md's generated blocks: the canonical reference run's workload, protocol, plan
facts, setup tables, per-query figures and the sentences that quote them.

Every figure is computed from the stored run the way the experiment computes it
(`icelab.analysis.stats`): medians over the measured rounds, a query's total as its median planning
plus its median execution (`stats.ratios`), geometric means over queries (`stats.geomeans`), gains
against the initial setup (`stats.gains`). The summary is recomputed from measurements.parquet,
so a block cannot quote a derived CSV that no longer matches its measurements.
"""

from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import effect_intervals, stats
from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.bench.answers import verdict
from icelab.core.contract import MEASUREMENTS
from icelab.core.runs import Run, read_run
from icelab.core.units import num, pct, ratio
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.readme import duration
from icelab.tools.docs.sources import default_protocol, phase_minutes, provenance, reference_run, steady_rows
from icelab.tools.validate import check_run

EXPERIMENT = "canonical"
PARQUET = "parquet"
VECTORIZATION = "spark.sql.iceberg.vectorization.enabled"
NESTED_PRUNING = "spark.sql.optimizer.nestedSchemaPruning.enabled"

# The queries that read a map column (their map cannot be pruned).
MAP_QUERIES = ("q07_map_lookup_month", "q10_identity_map_lookup_week")
# The query whose plan facts the page tabulates, and the query read by the widest projection.
PLAN_QUERY = "q05_nested_filter_projection_day"
NARROW_QUERY = "q19_narrow_projection_hour"
WIDE_QUERY = "q18_wide_projection_hour"
# What the study (not this run) reported for its initial Iceberg setup, quoted, not measured.
STUDY_INITIAL = "4x on average and 10x in the worst case"
# The study's own reading of its initial benchmark (Figure 8), quoted word for word.
STUDY_EXECUTION = "Read execution was the major difference for longer running queries."


@dataclass(frozen=True)
class Canonical:
    """The reference canonical run and the figures the experiment computes from it."""

    run: Run
    measurements: pd.DataFrame
    summary: pd.DataFrame  # stats.summarize: one row per (query, variant)
    versus: pd.DataFrame  # stats.ratios against Parquet, per (query, variant)
    setups: pd.DataFrame  # stats.geomeans of `versus`, per variant (Parquet included)
    gains: pd.DataFrame  # stats.gains against the initial setup, per Iceberg variant
    plan: pd.DataFrame  # plan_check.csv
    initial: str  # variant label of the initial setup, e.g. iceberg/initial
    optimized: str
    versus_ci: pd.DataFrame  # stats.geomean_intervals against Parquet, per Iceberg variant (queries fixed)
    versus_qci: pd.DataFrame  # the same with the queries resampled as well (over_queries)
    gains_ci: pd.DataFrame  # stats.geomean_intervals against the initial setup

    @property
    def meta(self) -> dict:
        return self.run.meta()

    def median(self, timing: str) -> pd.DataFrame:
        """Median `timing` (planning_ms, execution_ms, ...) as a query x variant frame."""
        return self.summary.pivot(index="query_id", columns="variant", values=f"{timing}_median")

    def count(self, column: str) -> pd.DataFrame:
        """A scan count (files_scanned, manifests_scanned, ...) as a query x variant frame."""
        return self.summary.pivot(index="query_id", columns="variant", values=column)

    def ratio(self, part: str, variant: str) -> pd.Series:
        """Per query: `variant` over Parquet for `part` (planning_ms, execution_ms, total_ms)."""
        rows = self.versus[self.versus["variant"] == variant]
        return rows.set_index("query_id")[f"{part}_ratio"]

    def geomean(self, variant: str, part: str) -> float:
        return float(self.setups.set_index("variant").loc[variant, f"{part}_geomean"])

    def gain(self, variant: str, part: str) -> float:
        """initial / variant, the geometric mean over queries (above 1: faster than initial)."""
        return 1 / float(self.gains.set_index("variant").loc[variant, f"{part}_geomean"])

    @property
    def iceberg(self) -> list[str]:
        """The Iceberg variants, in the run's order."""
        return [v for v in self.meta["variants"] if v != PARQUET]

    @property
    def windows(self) -> dict[str, str]:
        return self.meta["query_windows"]

    def find(self, name: str) -> str | None:
        """The variant of setup `name` (`iceberg/<name>`), or None when the run did not measure it
        (the default run measures the figures' setups only; each optimization alone is an
        interleaved comparison of its own, docs/results.md)."""
        return next((v for v in self.iceberg if setup(v) == name), None)


@functools.lru_cache(maxsize=8)
def _load(path: Path, stamp: tuple[int, int]) -> Canonical:
    run = read_run(path)
    if run is None:
        raise LookupError(f"{path}: not a run directory")
    measurements = stored(run).measurements()
    meta = run.meta()
    summary = stats.summarize(measurements, meta["protocol"]["unstable_iqr"])
    versus = stats.ratios(summary, PARQUET)
    initial, optimized = (f"iceberg/{meta['figures'][role]}" for role in ("initial", "optimized"))
    return Canonical(
        run=run,
        measurements=measurements,
        summary=summary,
        versus=versus,
        setups=stats.geomeans(versus, summary),
        gains=stats.gains(summary, initial),
        plan=stored(run).table("plan_check.csv"),
        initial=initial,
        optimized=optimized,
        versus_ci=stats.geomean_intervals(measurements, PARQUET),
        versus_qci=stats.geomean_intervals(measurements, PARQUET, over_queries=True),
        gains_ci=stats.geomean_intervals(measurements[measurements["format"] == "iceberg"], initial),
    )


def load(results: Path) -> Canonical:
    """The newest complete canonical run under `<results>/reference`, with its figures (cached
    while its measurements file is unchanged: `stats.summarize` is the slow part)."""
    return of_run(reference_run(results, EXPERIMENT))


def of_run(run: Run) -> Canonical:
    """Any complete canonical run with its figures (cached as `load`)."""
    stat = (run.path / MEASUREMENTS).stat()
    return _load(run.path, (stat.st_mtime_ns, stat.st_size))


def shown(c: Canonical, variant: str, part: str = "total_ms") -> str | None:
    """What the workload shows of `variant` against Parquet: `slower` or `faster` when the interval
    with the queries resampled (`versus_qci`) lies wholly above or below 1, else None (not established;
    also when there is no such interval)."""
    rows = c.versus_qci[c.versus_qci["variant"] == variant]
    if rows.empty or pd.isna(rows.iloc[0][f"{part}_ci_low"]):
        return None
    low, high = rows.iloc[0][f"{part}_ci_low"], rows.iloc[0][f"{part}_ci_high"]
    return "slower" if low > 1 else "faster" if high < 1 else None


def short(query_id: str) -> str:
    """`q05` for `q05_nested_filter_projection_day`."""
    return query_id.split("_", 1)[0]


def setup(variant: str) -> str:
    """`initial` for `iceberg/initial`."""
    return variant.split("/", 1)[-1]


def faster(c: Canonical, variant: str | None = None) -> tuple[int, int]:
    """(queries faster on `variant` than on Parquet, queries compared): a query is faster when its
    total (median planning + median execution, as `stats.ratios`) is below Parquet's."""
    totals = c.ratio("total_ms", variant or c.optimized).dropna()
    return int((totals < 1).sum()), len(totals)


def order_effect(c: Canonical) -> pd.DataFrame:
    """Per (query, Iceberg variant): its median execution in the measured rounds where it ran
    first of the query's variants, over its median where it did not (`excess`), with both
    medians and the counts. The rotation makes every variant go first in some rounds, so this
    compares a variant with itself: the order's cost, free of what the setups change."""
    m = c.measurements
    executed = counted(m).query("executed").sort_values("measured_utc")
    first = executed.groupby(["repetition", "query_id"])["variant"].transform("first") == executed["variant"]
    rows = []
    for (query_id, variant), part in executed.groupby(["query_id", "variant"], sort=True):
        went_first = part.loc[first[part.index], "execution_ms"]
        after = part.loc[~first[part.index], "execution_ms"]
        if variant == PARQUET or went_first.empty or after.empty:
            continue
        rows.append(
            {
                "query_id": query_id,
                "variant": variant,
                "first_ms": went_first.median(),
                "after_ms": after.median(),
                "excess": went_first.median() / after.median(),
                "n_first": len(went_first),
                "n": len(part),
            }
        )
    return pd.DataFrame(rows)


# ---- the workload and the setups -------------------------------------------------------------


def workload(results: Path) -> str:
    """The query table: id, window (run.json), what it exercises."""
    c = load(results)
    leaves = c.plan.groupby("query_id")["read_leaves"].max()
    return render(
        "canonical/workload.md.j2", windows=c.windows, leaves={q: str(n) for q, n in leaves.items()}
    )


def _setup_cells(meta: dict, name: str) -> dict[str, object]:
    spec = meta["setups"][name]
    profile = meta["profiles"][spec["profile"]]
    state = meta["variants"][f"iceberg/{name}"]
    return {
        "vectorization": bool(spec["spark_conf"].get(VECTORIZATION)),
        "pruning": bool(spec["spark_conf"].get(NESTED_PRUNING)),
        "target": profile.get("manifest_target_size"),
        "expire": bool(profile.get("expire_snapshots")),
        "manifests": state["manifests"],
        "snapshots": state["snapshots"],
    }


def setups_table(results: Path) -> str:
    """The setups: switches from run.json's setups, manifests and snapshots from its variants; a
    setting that differs from the initial setup's is bold."""
    c = load(results)
    meta = c.meta
    figures = {meta["figures"]["initial"]: "Figure 8", meta["figures"]["optimized"]: "Figure 9"}
    base = _setup_cells(meta, meta["figures"]["initial"])
    rows = []
    for name in meta["setups"]:
        cells = _setup_cells(meta, name)

        def bold(text: str, *keys: str, cells: dict = cells) -> str:
            return f"**{text}**" if any(cells[k] != base[k] for k in keys) else text

        manifests = (
            f"rewritten at {cells['target']} ({cells['manifests']})"
            if cells["target"]
            else f"as ingested ({cells['manifests']})"
        )
        snapshots = (
            f"expired to {cells['snapshots']}" if cells["expire"] else f"all {cells['snapshots']} kept"
        )
        label = f"`{name}`" + (f" ({figures[name]})" if name in figures else "")
        rows.append(
            [
                label,
                bold("on" if cells["vectorization"] else "off", "vectorization"),
                bold("on" if cells["pruning"] else "off", "pruning"),
                bold(manifests, "target"),
                bold(snapshots, "expire"),
            ]
        )
    header = ["setup", "Iceberg vectorized reads", "nested schema pruning", "manifests", "snapshots"]
    return table(header, rows)


def round_minutes(measurements: pd.DataFrame) -> pd.Series:
    """Minutes from the first to the last `measured_utc` of each round, by (warmup, executed,
    repetition)."""
    at = pd.to_datetime(measurements["measured_utc"])
    rounds = at.groupby([measurements["warmup"], measurements["executed"], measurements["repetition"]])
    return rounds.agg(lambda t: (t.max() - t.min()).total_seconds() / 60)


def protocol(results: Path) -> str:
    """The protocol paragraph: the warm cache, the rounds, the rotation and what a round costs."""
    c = load(results)
    rounds = round_minutes(c.measurements).xs(False, level="warmup")
    executed = rounds[rounds.index.get_level_values("executed")]
    planned = rounds[~rounds.index.get_level_values("executed")]
    return render(
        "canonical/protocol.md.j2",
        p={"steady_k": None, **c.meta["protocol"]},
        cache=c.meta.get("page_cache") or {},
        dataset=_dataset(c.run),
        variants=len(c.meta["variants"]),
        queries=len(c.windows),
        executed_round=_spread_of(executed),
        planned_round=_spread_of(planned),
        cores=c.run.env()["machine"]["cores"],
        steady=steady_state(c),
    )


def _spread_of(minutes: pd.Series) -> dict[str, float] | None:
    """The shortest, longest and mean of the rounds' minutes, with their count; None for no round."""
    if minutes.empty:
        return None
    return {"min": minutes.min(), "max": minutes.max(), "mean": minutes.mean(), "n": len(minutes)}


def steady_state(c: Canonical) -> dict[str, object] | None:
    """What the steady-state phase did (run.json `steady_state`), or None when it was off."""
    p, record = c.meta["protocol"], c.meta.get("steady_state")
    if not p.get("steady_k") or not record:
        return None
    cases = record["cases"]
    settled = [x for x in cases if x["settled"]]
    m = c.measurements
    return {
        "settled": len(settled),
        "cases": len(cases),
        "needed": statistics.median(x["warmups"] for x in settled) if settled else float("nan"),
        "minutes": phase_minutes(m[steady_rows(m, p["warmups"])]),
        "capped": sorted({short(x["query_id"]) for x in cases if not x["settled"]}),
    }


def _dataset(run: Run) -> str:
    return (run.config().get("dataset") or {}).get("name", "?")


def answers(results: Path) -> str:
    """The correctness sentence: answers.json's verdict, as the run printed it."""
    c = load(results)
    checked = json.loads((c.run.path / "answers.json").read_text())
    variants = sorted({rec["variants"] for rec in checked})
    return render(
        "canonical/answers.md.j2", dataset=_dataset(c.run), variants=variants, verdict=verdict(checked)
    )


# ---- plan facts -------------------------------------------------------------------------------


def _facts(row: pd.Series) -> tuple[object, ...]:
    pruned = row["nested_pruned"]
    pruned = "-" if pd.isna(pruned) else ("yes" if str(pruned) == "True" else "no (whole structs)")
    return (
        int(row["nested_filters_pushed"]),
        int(row["read_leaves"]),
        pruned,
        "yes" if row["vectorized"] else "no",
    )


def plan_facts(results: Path) -> str:
    """The plan facts of q05 per variant (variants with the same facts on one row), and the plan
    facts the page quotes for q19, q18 and the map queries."""
    c = load(results)
    plan = c.plan.set_index(["query_id", "variant"])
    groups: dict[tuple[object, ...], list[str]] = {}
    for variant in c.meta["variants"]:
        groups.setdefault(_facts(plan.loc[(PLAN_QUERY, variant)]), []).append(variant)
    rows = []
    for facts, variants in groups.items():
        names = ", ".join(f"`{v}`" if i == 0 else f"`{setup(v)}`" for i, v in enumerate(variants))
        rows.append([names + (" (Spark's defaults)" if variants == [PARQUET] else ""), *facts])
    header = ["variant", "nested filters pushed", "leaf fields read", "nested pruned", "vectorized"]
    narrow = plan.xs(NARROW_QUERY, level="query_id")
    wide = plan.xs(WIDE_QUERY, level="query_id")["read_leaves"]
    return render(
        "canonical/plan.md.j2",
        query=short(PLAN_QUERY),
        table=table(header, rows),
        narrow=short(NARROW_QUERY),
        vectorized=[f"`{setup(v)}`" for v in c.iceberg if bool(narrow.loc[v, "vectorized"])],
        wide=short(WIDE_QUERY),
        wide_leaves=sorted({int(wide[v]) for v in c.iceberg}),
        parquet_leaves=int(wide[PARQUET]),
        whole=[
            short(mq)
            for mq in MAP_QUERIES
            if all(str(plan.loc[(mq, v), "nested_pruned"]) == "False" for v in c.meta["variants"])
        ],
    )


def nested_predicates(results: Path) -> str:
    """The paragraph on nested predicate pushdown: versions from env.json, facts from plan_check.csv."""
    c = load(results)
    versions = c.run.env()["versions"]
    plan = c.plan.set_index(["query_id", "variant"]).xs(PLAN_QUERY, level="query_id")
    roles = {"initial": c.initial, "optimized": c.optimized}
    return render(
        "canonical/nested.md.j2",
        every=bool((plan.loc[c.iceberg, "nested_filters_pushed"].astype(int) > 0).all()),
        pushed={role: int(plan.loc[v, "nested_filters_pushed"]) for role, v in roles.items()},
        leaves={role: int(plan.loc[v, "read_leaves"]) for role, v in roles.items()},
        query=short(PLAN_QUERY),
        initial=setup(c.initial),
        optimized=setup(c.optimized),
        spark=".".join(versions["spark"].split(".")[:2]),
        iceberg=".".join(versions["iceberg"].split(".")[:2]),
    )


def vectorizing(c: Canonical) -> str:
    """The setup that shows what vectorized reads apply to: `vectorization` (on alone) when the
    run measured it, else the first Iceberg setup with vectorized reads on."""
    found = c.find("vectorization")
    if found:
        return found
    on = [v for v in c.iceberg if c.meta["setups"][setup(v)]["spark_conf"].get(VECTORIZATION)]
    if not on:
        raise LookupError(f"{c.run.run_id}: no Iceberg setup with {VECTORIZATION} on")
    return on[0]


def vectorized_queries(c: Canonical) -> list[str]:
    """The queries Iceberg reads vectorized once vectorized reads are on (`vectorizing`)."""
    v = vectorizing(c)
    plan = c.plan[(c.plan["variant"] == v) & c.plan["vectorized"].astype(bool)]
    return sorted(plan["query_id"], key=list(c.windows).index)


def primitives(results: Path) -> str:
    """Which queries vectorized reads can change (plan_check.csv)."""
    c = load(results)
    return render(
        "canonical/primitives.md.j2",
        queries=len(c.windows),
        vectorized=[short(q) for q in vectorized_queries(c)],
        setup=setup(vectorizing(c)),
    )


# ---- figures ------------------------------------------------------------------------------------


def protocol_changes(c: Canonical) -> dict[str, object]:
    """The run's protocol settings that differ from today's defaults: what the command that
    made it needs on top of `experiment=canonical` (a reference run can predate a default)."""
    now = default_protocol(EXPERIMENT)
    return {k: v for k, v in c.meta["protocol"].items() if k in now and now[k] != v}


def run_paragraph(results: Path) -> str:
    """Which run, on what, and how the cells are computed."""
    c = load(results)
    checked = check_run(c.run.path)
    machine = c.run.env().get("machine") or {}
    return render(
        "canonical/run.md.j2",
        dataset=_dataset(c.run),
        overrides=protocol_changes(c),
        provenance=provenance(c.run),
        rows=c.meta["rows"],
        problems=len(checked.problems),
        older=checked.older,
        cores=machine.get("cores", "?"),
        memory_gib=machine.get("memory_gib", "?"),
        queries=len(c.windows),
    )


def interval(intervals: pd.DataFrame, variant: str, part: str, invert: bool = False) -> str:
    """` [low, high]` of a geometric mean's bootstrap interval, inverted for a gain; empty when
    a cell had too few values for one."""
    rows = intervals[intervals["variant"] == variant] if len(intervals) else intervals
    if rows.empty or pd.isna(rows.iloc[0][f"{part}_ci_low"]):
        return ""
    low, high = float(rows.iloc[0][f"{part}_ci_low"]), float(rows.iloc[0][f"{part}_ci_high"])
    low, high = (1 / high, 1 / low) if invert else (low, high)
    return f" [{low:.2f}, {high:.2f}]"


def versus_parquet(results: Path) -> str:
    """Iceberg / Parquet per setup: geometric means with their intervals, the worst query by
    total, the planning share."""
    c = load(results)
    rows = []
    by = c.setups.set_index("variant")
    for variant in c.iceberg:
        r = by.loc[variant]
        rows.append(
            [
                f"`{setup(variant)}`",
                *(ratio(r[f"{t}_geomean"]) + interval(c.versus_ci, variant, t) for t in stats.PARTS),
                f"{short(r['worst_query'])} {ratio(r['worst_total_ratio'])}",
                pct(r["planning_share"]),
            ]
        )
        resampled = [interval(c.versus_qci, variant, t).strip() or "-" for t in stats.PARTS]
        rows.append([f"`{setup(variant)}`, queries resampled", *resampled, "", ""])
    rows.append(["(Parquet itself)", "", "", "", "", pct(by.loc[PARQUET, "planning_share"])])
    header = ["setup", "planning", "execution", "total", "worst query (total)", "planning share"]
    return render(
        "canonical/versus.md.j2",
        table=table(header, rows),
        queries=len(c.windows),
        confidence=effect_intervals.CONFIDENCE,
        shown={setup(v): shown(c, v) for v in c.iceberg},
    )


def gains_table(results: Path) -> str:
    """Each setup against the initial one: initial / setup, geometric means (`gains.csv` inverted),
    with their intervals."""
    c = load(results)
    rows = [
        [
            f"`{setup(v)}`",
            *(ratio(c.gain(v, t)) + interval(c.gains_ci, v, t, invert=True) for t in stats.PARTS),
        ]
        for v in c.iceberg
        if v != c.initial
    ]
    return table(["setup", "planning", "execution", "total"], rows)


def per_query(results: Path) -> str:
    """Per query: median planning + median execution (Parquet, initial, optimized) and optimized /
    Parquet of those totals (`stats.ratios`, as versus_parquet.csv)."""
    c = load(results)
    planning, execution = c.median("planning_ms"), c.median("execution_ms")
    totals = c.ratio("total_ms", c.optimized)
    rows = []
    for query_id, window in c.windows.items():
        cells = [
            f"{num(planning.loc[query_id, v])} + {num(execution.loc[query_id, v])}"
            for v in (PARQUET, c.initial, c.optimized)
        ]
        rows.append([short(query_id), window, *cells, ratio(totals[query_id])])
    header = [
        "query",
        "window",
        "Parquet",
        f"Iceberg {setup(c.initial)}",
        f"Iceberg {setup(c.optimized)}",
        f"{setup(c.optimized)} / Parquet",
    ]
    return table(header, rows)


def rewritten(c: Canonical) -> str:
    """The setup that shows what rewriting the manifests does to planning: `manifest_rewrite`
    (alone) when the run measured it, else the figures' optimized setup."""
    return c.find("manifest_rewrite") or c.optimized


def target_of(c: Canonical, variant: str) -> str:
    """The manifest target size of an Iceberg variant's table state, e.g. `8MB`."""
    return c.meta["profiles"][c.meta["setups"][setup(variant)]["profile"]]["manifest_target_size"]


def reading(results: Path) -> str:
    """The three bullets that read the figures: planning, execution, the noise floor."""
    c = load(results)
    planning, files = c.median("planning_ms"), c.count("files_scanned")
    i, o, rewrite = c.initial, c.optimized, rewritten(c)
    expiry, nested, vector = (c.find(n) for n in ("snapshot_expiry", "nested_pruning", "vectorization"))
    ip, pp = planning[i], planning[PARQUET]
    manifests = c.meta["variants"][i]["manifests"]
    per_scan = c.count("manifests_scanned")[i] / c.count("scan_nodes")[i]
    full = [q for q, w in c.windows.items() if w == "full"]
    narrow = [q for q, w in c.windows.items() if w in ("1h", "1d")]
    fewer = [q for q in narrow if files.loc[q, i] < files.loc[q, PARQUET]]
    order = order_figures(order_effect(c))

    def at(q: str) -> dict[str, object]:
        return {"query": short(q), "window": c.windows[q], "ms": pp[q]}

    return render(
        "canonical/reading.md.j2",
        initial=setup(i),
        optimized=setup(o),
        every=bool((per_scan == manifests).all()),
        manifests=manifests,
        initial_planning={"min": ip.min(), "max": ip.max(), "median": ip.median()},
        multi=[short(q) for q, n in c.count("scan_nodes")[i].items() if n > 1],
        fastest=at(pp.idxmin()),
        slowest=at(pp.idxmax()),
        rewrite={
            "setup": setup(rewrite),
            "target": target_of(c, rewrite),
            "manifests": c.meta["variants"][rewrite]["manifests"],
            "gain": c.gain(rewrite, "planning_ms"),
            "interval": interval(c.gains_ci, rewrite, "planning_ms", invert=True),
            "median": planning[rewrite].median(),
        },
        expiry=expiry
        and {
            "snapshots": c.meta["variants"][i]["snapshots"] - c.meta["variants"][expiry]["snapshots"],
            "gain": c.gain(expiry, "planning_ms"),
            "execution_gain": c.gain(expiry, "execution_ms"),
        },
        full=[
            {
                "query": short(q),
                "initial": planning.loc[q, i],
                "optimized": planning.loc[q, o],
                "parquet": pp[q],
            }
            for q in full
        ],
        full_faster=sum(all(planning.loc[q, v] < pp[q] for v in c.iceberg) for q in full),
        execution={
            "ratio": c.geomean(i, "execution_ms"),
            "interval": interval(c.versus_ci, i, "execution_ms"),
        },
        fewer_files=len(fewer),
        narrow=len(narrow),
        examples=[
            {
                "query": short(q),
                "window": c.windows[q],
                "files": files.loc[q, i],
                "parquet": files.loc[q, PARQUET],
            }
            for q in dict.fromkeys([*fewer[:1], *([PLAN_QUERY] if PLAN_QUERY in fewer else [])])
        ],
        nested=nested and pruning_alone(c, nested),
        vector=vector and vectorization_alone(c, vector, order["spread"]),
        executions=c.meta["protocol"]["executions"],
        order=order,
    )


def pruning_alone(c: Canonical, nested: str) -> dict[str, object]:
    """Nested schema pruning alone: the queries it reads fewer leaf fields for, and the three whose
    execution it shortens most."""
    execution, i = c.median("execution_ms"), c.initial
    leaves = c.plan.pivot(index="query_id", columns="variant", values="read_leaves")
    pruned = [q for q in c.windows if leaves.loc[q, nested] < leaves.loc[q, i]]
    gain = (execution.loc[pruned, i] / execution.loc[pruned, nested]).sort_values(ascending=False)
    top = [
        {
            "query": short(q),
            "leaves_before": leaves.loc[q, i],
            "leaves_after": leaves.loc[q, nested],
            "before": execution.loc[q, i],
            "after": execution.loc[q, nested],
        }
        for q in gain.index[:3]
    ]
    return {"queries": len(pruned), "top": top}


def vectorization_alone(c: Canonical, vector: str, spread: float) -> dict[str, object]:
    """Vectorization alone: initial / vectorization execution of the queries it can change, and
    whether they stay inside the cost of going first (`spread`)."""
    execution, i = c.median("execution_ms"), c.initial
    ratios = {q: execution.loc[q, i] / execution.loc[q, vector] for q in vectorized_queries(c)}
    return {
        "setup": setup(vector),
        "ratios": [{"query": short(q), "ratio": r} for q, r in ratios.items()],
        "inside": all(1 / spread <= r <= spread for r in ratios.values()),
    }


def order_figures(order: pd.DataFrame) -> dict[str, object]:
    """What going first of a query's variants costs, each setup against itself (`order_effect`)."""
    if order.empty:
        return {"cells": 0, "spread": float("nan")}
    worst = order.loc[order["excess"].idxmax()]
    return {
        "cells": len(order),
        "spread": max(order["excess"].max(), 1 / order["excess"].min()),
        "slower": int((order["excess"] > 1).sum()),
        "worst": {
            "excess": worst["excess"],
            "query": short(worst["query_id"]),
            "setup": setup(worst["variant"]),
            "first_ms": worst["first_ms"],
            "after_ms": worst["after_ms"],
        },
        "most": int(order["n_first"].max()),
        "rounds": int(order["n"].max()),
    }


def claims(results: Path) -> str:
    """Which of the study's claims reproduce, with this run's figures (and the planning
    experiment's growth.csv for the claim on windows)."""
    c = load(results)
    return render(
        "canonical/claims.md.j2",
        study_initial=STUDY_INITIAL,
        initial=setup(c.initial),
        optimized=setup(c.optimized),
        iceberg=".".join(c.run.env()["versions"]["iceberg"].split(".")[:2]),
        spark=".".join(c.run.env()["versions"]["spark"].split(".")[:2]),
        initially=initially_slower(c),
        reader=initial_reader(c),
        split=split_planning(c),
        after=after_optimizations(c),
        windows=across_windows(results, c),
        share=shares(c),
    )


def initially_slower(c: Canonical) -> dict[str, object]:
    """The study's "initially 4x slower on average, 10x worst": the initial setup's mean and worst
    query; `direction` is `size` when the mean reaches 4x, `direction` when only above 1x, each only
    when the interval with the queries resampled shows it slower (`shown`); else `unshown` or `none`."""
    planning, execution = c.median("planning_ms"), c.median("execution_ms")
    mean = c.geomean(c.initial, "total_ms")
    row = c.setups.set_index("variant").loc[c.initial]
    worst = row["worst_query"]
    wp, we = planning.loc[worst, c.initial], execution.loc[worst, c.initial]
    slower = shown(c, c.initial) == "slower"
    return {
        "direction": ("size" if mean >= 4 else "direction")
        if slower
        else ("unshown" if mean > 1 or shown(c, c.initial) is None else "none"),
        "mean": mean,
        "interval": interval(c.versus_qci, c.initial, "total_ms"),
        "worst": row["worst_total_ratio"],
        "query": short(worst),
        "window": c.windows[worst],
        "planning": wp,
        "execution": we,
        "planning_dominates": wp > we,
        "planning_ratio": c.geomean(c.initial, "planning_ms"),
    }


def initial_reader(c: Canonical) -> dict[str, object]:
    """Beside the study's "read execution was the major difference for longer running queries": the
    initial setup's execution over Parquet (geometric mean, both intervals, and per longest-window
    query), and which of the reader switches its setup (run.json `setups`) turns off."""
    conf = c.meta["setups"][setup(c.initial)]["spark_conf"]
    per_query = c.ratio("execution_ms", c.initial)
    long = [q for q, w in c.windows.items() if w in ("90d", "full")]
    return {
        "quote": STUDY_EXECUTION,
        "ratio": c.geomean(c.initial, "execution_ms"),
        "interval": interval(c.versus_ci, c.initial, "execution_ms").strip(),
        "queries_interval": interval(c.versus_qci, c.initial, "execution_ms").strip(),
        "long": [{"query": short(q), "window": c.windows[q], "ratio": per_query[q]} for q in long],
        "shown": shown(c, c.initial, "execution_ms"),
        "off": [key for key in (VECTORIZATION, NESTED_PRUNING) if not conf.get(key)],
        "on": [key for key in (VECTORIZATION, NESTED_PRUNING) if conf.get(key)],
    }


def split_planning(c: Canonical) -> dict[str, object]:
    """The study's "planning for short windows, execution for long queries": the five worst
    ratios to Parquet and execution's least share of the longest-window queries; `holds` when the
    five are all 1h/1d and that share is above half."""
    planning, execution, i = c.median("planning_ms"), c.median("execution_ms"), c.initial
    totals = c.ratio("total_ms", i).sort_values(ascending=False)
    top = list(totals.index[:5])
    long = [q for q, w in c.windows.items() if w in ("90d", "full")]
    share = min(execution.loc[q, i] / (planning.loc[q, i] + execution.loc[q, i]) for q in long)
    return {
        "holds": all(c.windows[q] in ("1h", "1d") for q in top) and share > 0.5,
        "planning_share": c.setups.set_index("variant").loc[i, "planning_share"],
        "top": [{"query": short(q), "window": c.windows[q], "ratio": totals[q]} for q in top],
        "execution_share": share,
        "long": [short(q) for q in long],
    }


def after_optimizations(c: Canonical) -> dict[str, object]:
    """The study's "after the optimizations, as fast as Parquet or faster": the optimized means,
    how many queries are faster, and the full-table ones."""
    o = c.optimized
    mean = c.geomean(o, "total_ms")
    n_fast, n_all = faster(c)
    totals = c.ratio("total_ms", o)
    full = [q for q, w in c.windows.items() if w == "full"]
    return {
        "shown": shown(c, o),
        "mean": mean,
        "interval": interval(c.versus_qci, o, "total_ms"),
        "noise_interval": interval(c.versus_ci, o, "total_ms"),
        "planning": c.geomean(o, "planning_ms"),
        "execution": c.geomean(o, "execution_ms"),
        "most": n_fast > n_all / 2,
        "faster": n_fast,
        "queries": n_all,
        "full": [
            {
                "query": short(q),
                "faster": totals[q] < 1,
                "ratio": 1 / totals[q] if totals[q] < 1 else totals[q],
            }
            for q in full
        ],
    }


def across_windows(results: Path, c: Canonical) -> dict[str, object]:
    """The study's "planning near-constant across windows", from the planning experiment's table
    state with the manifest rewrite's target: growth from its narrow to its wide window, and its
    wide-window planning against Parquet's (`below`: `far` under half, `all` under, else `not`)."""
    planning_run = reference_run(results, "manifest_8mb")
    growth = stored(planning_run).table("growth.csv")
    target = target_of(c, rewritten(c))
    profiles = planning_run.meta()["profiles"]  # its table state with the same manifest target
    profile = next((n for n, spec in profiles.items() if spec.get("manifest_target_size") == target), None)
    if profile is None:
        raise LookupError(f"{planning_run.run_id}: no profile with manifests rewritten at {target}")
    wide, narrow = _growth_windows(growth)
    rewrite = growth[growth["variant"] == f"iceberg/{profile}"].set_index("query_id")
    parquet = growth[growth["variant"] == PARQUET].set_index("query_id").loc[rewrite.index]
    ice_wide, pq_wide = rewrite[f"planning_ms_median_{wide}"], parquet[f"planning_ms_median_{wide}"]
    return {
        "run": planning_run.run_id,
        "target": target,
        "grows": bool((rewrite["planning_ratio"] > 1).all()),
        "narrow": narrow,
        "wide": wide,
        "ratios": list(rewrite["planning_ratio"]),
        "below": "far" if (ice_wide < pq_wide / 2).all() else "all" if (ice_wide < pq_wide).all() else "not",
        "iceberg": list(ice_wide),
        "parquet": list(pq_wide),
    }


def shares(c: Canonical) -> dict[str, object]:
    """Each optimization's total gain over the initial setup; with snapshot expiry and more than one
    optimization alone measured, the ones above and within its execution "gain" (`floor`)."""
    gains = {setup(v): c.gain(v, "total_ms") for v in c.iceberg if v != c.initial}
    o = setup(c.optimized)
    figures: dict[str, object] = {
        "optimized": gains[o],
        "interval": interval(c.gains_ci, c.optimized, "total_ms", invert=True),
        "floor": None,
    }
    expiry = c.find("snapshot_expiry")
    single = sorted(((k, g) for k, g in gains.items() if k != o), key=lambda kg: -kg[1])
    if expiry and len(single) > 1:
        floor = c.gain(expiry, "execution_ms")
        figures["floor"] = floor
        figures["above"] = [{"setup": k, "gain": g} for k, g in single if g > floor]
        figures["within"] = [{"setup": k, "gain": g} for k, g in single if g <= floor]
    return figures


def _hours(window: str) -> float:
    """`1h` -> 1, `180d` -> 4320."""
    return float(window[:-1]) * {"h": 1, "d": 24}[window[-1]]


def _growth_windows(growth: pd.DataFrame) -> tuple[str, str]:
    """(wide, narrow) window of a growth.csv, from its `planning_ms_median_<window>` columns."""
    prefix = "planning_ms_median_"
    windows = [col[len(prefix) :] for col in growth.columns if col.startswith(prefix)]
    if len(windows) != 2:
        raise ValueError(f"growth.csv: expected two windows, found {windows}")
    narrow, wide = sorted(windows, key=_hours)
    return wide, narrow


def duration_paragraph(results: Path) -> str:
    """Which dataset the figures are at, and how long the reference run took."""
    return render("canonical/duration.md.j2", duration=duration(load(results).run))


BLOCKS: dict[str, Callable[[Path], str]] = {
    "canonical-duration": duration_paragraph,
    "canonical-workload": workload,
    "canonical-setups": setups_table,
    "canonical-protocol": protocol,
    "canonical-answers": answers,
    "canonical-plan": plan_facts,
    "canonical-nested": nested_predicates,
    "canonical-primitives": primitives,
    "canonical-run": run_paragraph,
    "canonical-versus-parquet": versus_parquet,
    "canonical-gains": gains_table,
    "canonical-per-query": per_query,
    "canonical-reading": reading,
    "canonical-claims": claims,
}
