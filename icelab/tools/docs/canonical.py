"""docs/canonical.md's generated blocks: the canonical reference run's workload, protocol, plan
facts, setup tables, per-query figures and the sentences that quote them.

Every figure is computed from the stored run the way the experiment computes it
(`icelab.bench.stats`): medians over the measured rounds, a query's total as its median planning
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

from icelab.bench import stats
from icelab.bench.answers import verdict
from icelab.core.contract import MEASUREMENTS, read_measurements
from icelab.core.runs import Run, read_run
from icelab.core.units import minutes, ms, ms_span, num, pct, ratio, spelled
from icelab.tools.docs.markdown import table
from icelab.tools.docs.readme import duration
from icelab.tools.docs.sources import default_protocol, phase_minutes, provenance, reference_run, steady_rows
from icelab.tools.validate import check_run

EXPERIMENT = "canonical"
PARQUET = "parquet"
VECTORIZATION = "spark.sql.iceberg.vectorization.enabled"
NESTED_PRUNING = "spark.sql.optimizer.nestedSchemaPruning.enabled"

# What each query exercises (the purpose line of its queries/<id>.sql header); `{leaves}` is the
# most leaf fields any variant of the run read for it (plan_check.csv).
EXERCISES = {
    "q01_count_last_hour": "the narrowest window; partition pruning; no column read beyond the filter",
    "q02_top_pages_day": "top-N over a nested struct field (web.webPageDetails), nested filter on a measure",
    "q03_event_types_week": "group-by on a top-level primitive column (the vectorized reader's best case)",
    "q04_country_browser_month": "group-by on two nested struct fields three levels deep "
    "(nested schema pruning)",
    "q05_nested_filter_projection_day": "a selective filter on a nested field (predicate pushdown) "
    "with a narrow nested projection",
    "q06_tablet_makers_week": "filter and group-by on nested struct fields "
    "(device.type, device.manufacturer)",
    "q07_map_lookup_month": "map lookup by key (customAttributes['loyalty_tier']), grouping on the "
    "looked-up value",
    "q08_top_products_week": "array explode (productListItems), aggregation over struct fields of array "
    "elements (own DuckDB SQL)",
    "q09_revenue_by_currency_month": "filter on a nested struct that is mostly null (commerce.order), "
    "sums of nested doubles",
    "q10_identity_map_lookup_week": "the map of arrays (identityMap['Email']), a predicate over array "
    "elements (own DuckDB SQL)",
    "q11_gdpr_user_search_full": "a full-table scan with a nested IN filter (no partition predicate: "
    "every manifest is read)",
    "q12_distinct_counts_month": "exact distinct counts over nested fields",
    "q13_daily_active_users_month": "a wide-window aggregation, distinct per partition day",
    "q14_sessions_day": "sessionization with a window function (lag over visitor, ordered by time)",
    "q15_viewport_percentiles_week": "exact percentiles over a nested integer field, grouped by another "
    "nested field (own DuckDB SQL)",
    "q16_region_join_month": "a join with a small dimension (country -> region), group-by on the dimension",
    "q17_view_to_purchase_day": "a self-join of the table (two scans of the same window), distinct on a "
    "nested id",
    "q18_wide_projection_hour": "the widest projection (every column, {leaves} leaf fields, maps and "
    "arrays); no pruning possible",
    "q19_narrow_projection_hour": "the narrowest projection, primitives only (vectorized reads apply)",
    "q20_commerce_funnel_week": "sums of nested struct measures (commerce.*.value) over a nested not-null "
    "filter",
    "q21_marketing_channels_quarter": "a wide window grouped on nested fields of an optional struct",
    "q22_search_keywords_month": "a range filter on a nested integer (search.pageDepth) pushed to the "
    "scan, group-by",
    "q23_monthly_event_types_full": "a full-table aggregation on top-level primitives (partition column "
    "and eventType)",
}
# The queries that read a map column (their map cannot be pruned).
MAP_QUERIES = ("q07_map_lookup_month", "q10_identity_map_lookup_week")
# The query whose plan facts the page tabulates, and the query read by the widest projection.
PLAN_QUERY = "q05_nested_filter_projection_day"
NARROW_QUERY = "q19_narrow_projection_hour"
WIDE_QUERY = "q18_wide_projection_hour"
# What the study (not this run) reported for its initial Iceberg setup, quoted, not measured.
STUDY_INITIAL = "4x on average and 10x in the worst case"


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
    versus_ci: pd.DataFrame  # stats.geomean_intervals against Parquet, per Iceberg variant
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
    measurements = read_measurements(run.path)
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
        plan=pd.read_csv(run.path / "plan_check.csv"),
        initial=initial,
        optimized=optimized,
        versus_ci=stats.geomean_intervals(measurements, PARQUET),
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


def short(query_id: str) -> str:
    """`q05` for `q05_nested_filter_projection_day`."""
    return query_id.split("_", 1)[0]


def setup(variant: str) -> str:
    """`initial` for `iceberg/initial`."""
    return variant.split("/", 1)[-1]


def listing(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


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
    executed = m[(~m["warmup"]) & m["executed"] & (m["status"] == "ok")].sort_values("measured_utc")
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
    rows = []
    for query_id, window in c.windows.items():
        if query_id not in EXERCISES:
            raise KeyError(
                f"docs/canonical.md: no description of {query_id} in icelab/tools/docs/canonical.py"
            )
        rows.append([f"`{query_id}`", window, EXERCISES[query_id].format(leaves=leaves.get(query_id, "?"))])
    return table(["query", "window", "exercises"], rows)


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
    meta, env = c.meta, c.run.env()
    p = meta["protocol"]
    cache = meta.get("page_cache") or {}
    variants, queries = len(meta["variants"]), len(c.windows)
    dataset = (c.run.config().get("dataset") or {}).get("name", "?")
    rounds = round_minutes(c.measurements).xs(False, level="warmup")
    executed = rounds[rounds.index.get_level_values("executed")]
    planned = rounds[~rounds.index.get_level_values("executed")]
    warm = (
        f"`protocol.warm_cache`: {num(cache['files'])} files, {cache['bytes'] / 1e9:.1f} GB at "
        f"`{dataset}` in {num(cache['seconds'])} s"
        if cache
        else "`protocol.warm_cache`"
    )
    n, e = p["repetitions"], p["executions"]
    executes = (
        "none of which executes"
        if e == 0
        else "each of which also executes"
        if e >= n
        else "the first of which also executes"
        if e == 1
        else f"the first {spelled(e)} of which also execute"
    )
    cost = []
    if len(executed):
        cost.append(f"an executed measured round took {minutes(executed.max())} minutes")
    if len(planned):
        cost.append(f"a planning-only round {minutes(planned.max())} minutes")
    return (
        f"**Protocol.** Every local data file is read once first ({warm}), so no variant alone "
        f"reads a cold disk. Then {spelled(p['warmups'])} warm-up round"
        f"{'' if p['warmups'] == 1 else 's'} that "
        + ("executes" if p["warmups_execute"] else "plans")
        + f" every case (`protocol.warmups_execute`), then {spelled(n)} measured rounds, {executes} "
        f"(`protocol.executions: {e}`). Within a round each query visits the {variants} variants "
        f"from a rotating start (query i starts at variant i mod {variants}). Both came from a "
        "first medium run without them (not kept): each query's first executions were slower "
        "whichever setup they hit, and with a fixed order that cost fell on `initial` every time "
        'and showed up as an execution "gain" for manifest rewrite and snapshot expiry, which '
        f"cannot change execution. Execution is what costs: with {queries} queries on {variants} "
        f"variants, {' and '.join(cost)} (first to last `measured_utc` of the round, "
        f"{env['machine']['cores']} cores), so execution figures come from "
        f"{spelled(e)} measured value{'' if e == 1 else 's'} per case (after the "
        + ("steady-state phase" if p.get("steady_k") else "executed warm-up")
        + f") and planning medians from {spelled(n)}; a bigger machine can raise `protocol.executions` "
        '(docs/protocol.md, "Budget").' + steady_sentence(c) + "\n"
    )


def steady_sentence(c: Canonical) -> str:
    """What the steady-state phase did (run.json `steady_state`), or nothing when it was off."""
    p, record = c.meta["protocol"], c.meta.get("steady_state")
    if not p.get("steady_k") or not record:
        return ""
    cases = record["cases"]
    settled = [x for x in cases if x["settled"]]
    needed = statistics.median(x["warmups"] for x in settled) if settled else float("nan")
    m = c.measurements
    took = phase_minutes(m[steady_rows(m, p["warmups"])])
    capped = sorted({short(x["query_id"]) for x in cases if not x["settled"]})
    return (
        f" Before the measured rounds, the steady-state phase executed each case back to back until "
        f"its last {p['steady_k']} totals agreed within {p['steady_tolerance']:.0%}, at most "
        f"{p['steady_cap']} times: {len(settled)} of {len(cases)} cases settled, after a median of "
        f"{needed:g} executions, and the phase took {minutes(took)} minutes"
        + (f"; not settled at the cap: {listing(capped)}" if capped else "")
        + "."
    )


def answers(results: Path) -> str:
    """The correctness sentence: answers.json's verdict, as the run printed it."""
    c = load(results)
    checked = json.loads((c.run.path / "answers.json").read_text())
    variants = sorted({rec["variants"] for rec in checked})
    dataset = (c.run.config().get("dataset") or {}).get("name", "?")
    return (
        f"At `{dataset}` each answer was compared across {listing([str(v) for v in variants])} "
        f"variants (`answers.json`): `{verdict(checked)}`.\n"
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
    q = plan.xs(NARROW_QUERY, level="query_id")
    vectorized = [f"`{setup(v)}`" for v in c.iceberg if bool(q.loc[v, "vectorized"])]
    wide = plan.xs(WIDE_QUERY, level="query_id")["read_leaves"]
    ice_wide = sorted({int(wide[v]) for v in c.iceberg})
    whole = [
        short(mq)
        for mq in MAP_QUERIES
        if all(str(plan.loc[(mq, v), "nested_pruned"]) == "False" for v in c.meta["variants"])
    ]
    return (
        f"From `plan_check.csv`, {short(PLAN_QUERY)} (a filter on `environment.geo.countryCode`, a "
        "narrow nested projection):\n\n"
        + table(header, rows)
        + f"\n{short(NARROW_QUERY)} (top-level primitives only) is vectorized on Iceberg in "
        f"{listing(vectorized) if vectorized else 'no setup'} only; {short(WIDE_QUERY)} reads "
        f"{'/'.join(map(str, ice_wide))} leaf fields in every Iceberg setup ({int(wide[PARQUET])} on "
        f"Parquet); {listing(whole) if whole else 'no map query'} read their map whole in every "
        "setup (a map cannot be pruned).\n"
    )


def nested_predicates(results: Path) -> str:
    """The paragraph on nested predicate pushdown: versions from env.json, facts from plan_check.csv."""
    c = load(results)
    versions = c.run.env()["versions"]
    spark, iceberg = (".".join(versions[k].split(".")[:2]) for k in ("spark", "iceberg"))
    plan = c.plan.set_index(["query_id", "variant"])
    pushed = {
        setup(v): int(plan.loc[(PLAN_QUERY, v), "nested_filters_pushed"]) for v in (c.initial, c.optimized)
    }
    leaves = {setup(v): int(plan.loc[(PLAN_QUERY, v), "read_leaves"]) for v in (c.initial, c.optimized)}
    i, o = setup(c.initial), setup(c.optimized)
    every = all(int(plan.loc[(PLAN_QUERY, v), "nested_filters_pushed"]) > 0 for v in c.iceberg)
    return (
        "**What this engine does with nested predicates.** In "
        + ("every setup, `initial` included" if every else "some setups")
        + f", the nested predicates reach the Iceberg scan (`nested_filters_pushed` "
        f"{pushed[i]} for {short(PLAN_QUERY)} in `{i}`, {pushed[o]} in `{o}`): Spark {spark} offers every "
        f"predicate, nested ones too, to a DataSource V2 table, and Iceberg {iceberg} accepts them. No "
        "setting in this stack turns that off (tried: `nestedSchemaPruning.enabled`, "
        "`nestedPredicatePushdownSupportedFileSources`, excluding `V2ScanRelationPushDown`). The "
        "study's initial Iceberg (Spark 2.4) lacked it; here the `initial` setup can only withhold "
        "nested *schema pruning* and vectorized reads. The plan check shows the difference where one "
        f"exists: {short(PLAN_QUERY)} reads {leaves[i]} leaf fields in `{i}` and {leaves[o]} in `{o}`.\n"
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
    vec = vectorized_queries(c)
    return (
        "**Vectorized reads apply to primitives only.** Iceberg's vectorized Parquet reader is used "
        "only when every column a scan reads is a primitive; any struct, map or array column falls "
        f"back to row-based reads, pruned or not. Of the {len(c.windows)} queries, "
        f"{len(vec)} read primitives only ({', '.join(map(short, vec))}: the ones `plan_check.csv` shows "
        f"vectorized in `{setup(vectorizing(c))}`), so vectorized reads can only change those.\n"
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
    env, meta = c.run.env(), c.meta
    dataset = (c.run.config().get("dataset") or {}).get("name", "?")
    verdict_ = check_run(c.run.path)
    if verdict_.problems:
        contract = f"`icelab validate`: {len(verdict_.problems)} problems"
    elif verdict_.older:
        contract = (
            "`icelab validate`: valid under an older contract (before " + ", ".join(verdict_.older) + ")"
        )
    else:
        contract = "`icelab contract` ok"
    machine = env.get("machine") or {}
    overrides = "".join(f" protocol.{k}={v}" for k, v in protocol_changes(c).items())
    return (
        f"`python run.py experiment=canonical dataset={dataset}{overrides}`, {provenance(c.run)}; "
        f"{num(meta['rows'])} rows, {contract}; {machine.get('cores', '?')} cores, "
        f"{machine.get('memory_gib', '?')} GiB. A query's total is its median planning plus its "
        "median execution; each cell of the two setup tables below is the geometric mean over the "
        f"{len(c.windows)} queries of the per-query ratio Iceberg / Parquet (`versus_parquet.csv`, "
        "`setups.csv`: `icelab/bench/stats.py`, `ratios` and `geomeans`).\n"
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
    rows.append(["(Parquet itself)", "", "", "", "", pct(by.loc[PARQUET, "planning_share"])])
    return table(["setup", "planning", "execution", "total", "worst query (total)", "planning share"], rows)


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


# Where a run of the figures' setups alone sends the reader for each optimization alone.
RESULTS_EFFECTS = '[the results page](results.md) ("Effects checked against known answers")'
ALONE = f"each optimization alone, interleaved with `initial` in one session, is in {RESULTS_EFFECTS}"


def rewritten(c: Canonical) -> str:
    """The setup that shows what rewriting the manifests does to planning: `manifest_rewrite`
    (alone) when the run measured it, else the figures' optimized setup."""
    return c.find("manifest_rewrite") or c.optimized


def reading(results: Path) -> str:
    """The three bullets that read the figures: planning, execution, the noise floor."""
    c = load(results)
    meta = c.meta
    planning, execution = c.median("planning_ms"), c.median("execution_ms")
    files = c.count("files_scanned")
    i, o = c.initial, c.optimized
    rewrite = rewritten(c)
    expiry, nested, vector = (c.find(n) for n in ("snapshot_expiry", "nested_pruning", "vectorization"))

    # Planning.
    ip = planning[i]
    per_scan = c.count("manifests_scanned")[i] / c.count("scan_nodes")[i]
    total_manifests = meta["variants"][i]["manifests"]
    every = bool((per_scan == total_manifests).all())
    multi = [short(q) for q, n in c.count("scan_nodes")[i].items() if n > 1]
    pp = planning[PARQUET]
    fast_q, slow_q = pp.idxmin(), pp.idxmax()
    full = [q for q, w in c.windows.items() if w == "full"]
    full_faster = [q for q in full if all(planning.loc[q, v] < pp[q] for v in c.iceberg)]
    full_text = "; ".join(
        f"{short(q)}: {num(planning.loc[q, i])} and {num(planning.loc[q, o])} ms against {num(pp[q])}"
        for q in full
    )
    target = meta["profiles"][meta["setups"][setup(rewrite)]["profile"]]["manifest_target_size"]
    expiry_text = ""
    if expiry:
        snaps = meta["variants"][i]["snapshots"] - meta["variants"][expiry]["snapshots"]
        expiry_text = (
            f"Expiring {snaps} snapshots changes planning by {ratio(c.gain(expiry, 'planning_ms'))}: "
            "what it removes is a larger `metadata.json`, parsed once per query. "
        )
    planning_bullet = (
        "- *Planning* dominates the gap in the initial setup: "
        + (f"every Iceberg scan reads all {total_manifests}" if every else "Iceberg scans read the")
        + f" as-ingested manifests ({num(ip.min())} to {num(ip.max())} ms, median {num(ip.median())}"
        + (
            f"; {listing(multi)} scans the table {'twice' if len(multi) == 1 else 'more than once'}"
            if multi
            else ""
        )
        + ") whatever its window, while Parquet lists only the partitions the window touches "
        f"({ms(pp[fast_q])} for {short(fast_q)} at {c.windows[fast_q]}, {ms(pp[slow_q])} for "
        f"{short(slow_q)} at {c.windows[slow_q]}). "
        + ("Manifests rewritten at " if rewrite != o else f"In `{setup(o)}`, manifests rewritten at ")
        + f"{target} ({meta['variants'][rewrite]['manifests']} manifests) cut Iceberg planning "
        f"{ratio(c.gain(rewrite, 'planning_ms'))}{interval(c.gains_ci, rewrite, 'planning_ms', invert=True)} "
        f"(median {num(planning[rewrite].median())} ms). "
        + expiry_text
        + "For "
        + (
            f"{'both' if len(full_faster) == 2 else 'all'} full-table queries Iceberg plans faster than "
            "Parquet in every setup"
            if full and full_faster == full
            else f"{len(full_faster)} of the {len(full)} full-table queries Iceberg plans faster than "
            "Parquet in every setup"
        )
        + f" ({full_text}; `{setup(i)}` and `{setup(o)}`).\n"
    )

    # Execution.
    narrow = [q for q, w in c.windows.items() if w in ("1h", "1d")]
    fewer = [q for q in narrow if files.loc[q, i] < files.loc[q, PARQUET]]
    shown = list(dict.fromkeys([*fewer[:1], *([PLAN_QUERY] if PLAN_QUERY in fewer else [])]))
    examples = "; ".join(
        f"{short(q)} at {c.windows[q]} scans {num(files.loc[q, i])} of the "
        f"{num(files.loc[q, PARQUET])} files Parquet reads"
        for q in shown
    )
    order = order_effect(c)
    spread = max(order["excess"].max(), 1 / order["excess"].min()) if len(order) else float("nan")
    vec = vectorized_queries(c)
    alone = []
    if nested:
        leaves = c.plan.pivot(index="query_id", columns="variant", values="read_leaves")
        pruned = [q for q in c.windows if leaves.loc[q, nested] < leaves.loc[q, i]]
        gain = (execution.loc[pruned, i] / execution.loc[pruned, nested]).sort_values(ascending=False)
        top = [
            f"{short(q)} ({leaves.loc[q, i]} to {leaves.loc[q, nested]} leaf fields: "
            f"{ms_span(execution.loc[q, i], execution.loc[q, nested])})"
            for q in gain.index[:3]
        ]
        alone.append(
            f"Nested schema pruning alone reads fewer leaf fields in {len(pruned)} queries; it "
            f"shortens execution most for {listing(top)}."
        )
    if vector:
        vec_ratios = [f"{short(q)} {ratio(execution.loc[q, i] / execution.loc[q, vector])}" for q in vec]
        inside = all(1 / spread <= execution.loc[q, i] / execution.loc[q, vector] <= spread for q in vec)
        alone.append(
            f"Vectorization can only change the {spelled(len(vec))} queries that read primitives "
            f"alone; `{setup(i)}` / `{setup(vector)}` execution: {', '.join(vec_ratios)}, "
            + ("inside" if inside else "beyond")
            + f" the cost of going first (up to {ratio(spread)}, below)."
        )
    if not (nested and vector):
        alone.append(f"This run measures the figures' setups; {ALONE}.")
    execution_bullet = (
        f"- *Execution* in the initial setup is {ratio(c.geomean(i, 'execution_ms'))}"
        f"{interval(c.versus_ci, i, 'execution_ms')} of Parquet's "
        "(geometric mean): on this data Spark's Parquet reader and Iceberg's row reader cost about "
        f"the same per file, and Iceberg reads fewer files in {len(fewer)} of the {len(narrow)} "
        f"one-hour and one-day queries, its column bounds skipping files ({examples}; nested "
        "predicate pushdown at work, in `initial` too). " + " ".join(alone) + "\n"
    )

    # Noise floor.
    executions = meta["protocol"]["executions"]
    floor = (
        f"Snapshot expiry cannot change execution, and its {ratio(c.gain(expiry, 'execution_ms'))} "
        'execution "gain" is that floor. '
        if expiry
        else ""
    )
    noise_bullet = (
        "- *The noise floor*: each execution figure is "
        + (
            "one measured value. "
            if executions == 1
            else f"the median of {spelled(executions)} measured values, and the intervals in "
            "brackets are 95% bootstrap intervals of the geometric mean over that measurement "
            "noise (the queries fixed). "
        )
        + floor
        + order_sentence(order)
        + "\n"
    )
    return planning_bullet + execution_bullet + noise_bullet


def order_sentence(order: pd.DataFrame) -> str:
    """What going first of a query's variants costs, each setup against itself (`order_effect`)."""
    if order.empty:
        return (
            "No setup executed both first and not first in the measured rounds, so the cost of "
            "going first is not measured here."
        )
    worst = order.loc[order["excess"].idxmax()]
    slower = int((order["excess"] > 1).sum())
    most, rounds = int(order["n_first"].max()), int(order["n"].max())
    return (
        "Going first still costs after the warm-ups: in the measured rounds, an Iceberg setup that "
        "executed a query first of the query's variants was slower than in the rounds where it "
        f"came later in {slower} of {len(order)} (query, setup) cells, by up to "
        f"{ratio(worst['excess'])} ({short(worst['query_id'])} `{setup(worst['variant'])}`: "
        f"{ms_span(worst['first_ms'], worst['after_ms'])}, medians). Each round rotates which variant "
        "goes first, so every setup pays it in turn and the geometric means stay fair; a setup went "
        f"first in at most {spelled(most)} of a query's {spelled(rounds)} executed rounds, "
        + (
            "fewer than half, so a per-query cell, their median, stays within the range of the "
            "rounds where it came later."
            if most < rounds / 2
            else "so a per-query cell, their median, can carry that cost."
        )
    )


def claims(results: Path) -> str:
    """Which of the study's claims reproduce, with this run's figures (and the planning
    experiment's growth.csv for the claim on windows)."""
    c = load(results)
    meta = c.meta
    planning, execution = c.median("planning_ms"), c.median("execution_ms")
    i, o = c.initial, c.optimized
    by = c.setups.set_index("variant")

    # Initially slower.
    mean_i = c.geomean(i, "total_ms")
    worst_q, worst_r = by.loc[i, "worst_query"], by.loc[i, "worst_total_ratio"]
    wp, we = planning.loc[worst_q, i], execution.loc[worst_q, i]
    iceberg = ".".join(c.run.env()["versions"]["iceberg"].split(".")[:2])
    direction = (
        "in direction, not in size"
        if 1 < mean_i < 4
        else ("yes" if mean_i >= 4 else "no, not even in direction")
    )
    initially = (
        f"**Which of the study's claims reproduce.** *Initially Iceberg was slower, {STUDY_INITIAL}*: "
        f"{direction}: {ratio(mean_i)} on average and {ratio(worst_r)} in the worst case "
        f"({short(worst_q)}, a {c.windows[worst_q]} query whose {num(wp)} ms of planning "
        f"{'outweighs' if wp > we else 'adds to'} its {num(we)} ms scan), because the reader gap the "
        "study had (no vectorization, no nested pruning in Iceberg's reader of 2020) is not in "
        f"Iceberg {iceberg}."
    )

    # Planning for short windows, execution for long queries.
    totals_i = c.ratio("total_ms", i).sort_values(ascending=False)
    top = list(totals_i.index[:5])
    long = [q for q, w in c.windows.items() if w in ("90d", "full")]
    exec_share = min(execution.loc[q, i] / (planning.loc[q, i] + execution.loc[q, i]) for q in long)
    narrow_top = all(c.windows[q] in ("1h", "1d") for q in top)
    split = (
        "*Split planning mattered most for short windows, execution for long queries*: "
        f"{'yes' if narrow_top and exec_share > 0.5 else 'in part'}; planning is "
        f"{pct(by.loc[i, 'planning_share'])} of Iceberg's time in `{setup(i)}`, but the "
        f"{spelled(len(top))} worst ratios to Parquet are "
        f"{listing([f'{short(q)} ({c.windows[q]}, {ratio(totals_i[q])})' for q in top])}, and "
        f"execution is {pct(exec_share)} or more of the total of the {spelled(len(long))} "
        f"longest-window queries ({listing([short(q) for q in long])})."
    )

    # After the optimizations.
    mean_o = c.geomean(o, "total_ms")
    n_fast, n_all = faster(c)
    totals_o = c.ratio("total_ms", o)
    full = [q for q, w in c.windows.items() if w == "full"]
    full_text = listing(
        [
            f"{short(q)} {ratio(1 / totals_o[q])} faster"
            if totals_o[q] < 1
            else f"{short(q)} {ratio(totals_o[q])} slower"
            for q in full
        ]
    )
    after = (
        "*After the optimizations, Iceberg is as fast as Parquet or faster*: "
        f"{'on average, yes' if mean_o <= 1 else 'no'}, {ratio(mean_o)} overall (planning "
        f"{ratio(c.geomean(o, 'planning_ms'))}, execution {ratio(c.geomean(o, 'execution_ms'))}), "
        f"{'but only' if n_fast <= n_all / 2 else 'and'} {n_fast} of {n_all} queries faster on "
        f"Iceberg (`{setup(o)}` / Parquet below 1 in the table above)"
        + (f"; the full-table ones: {full_text}." if full else ".")
    )

    # Planning across windows: the planning experiment, for the manifest rewrite's table state.
    planning_run = reference_run(results, "manifest_8mb")
    growth = pd.read_csv(planning_run.path / "growth.csv")
    target = meta["profiles"][meta["setups"][setup(rewritten(c))]["profile"]]["manifest_target_size"]
    profiles = planning_run.meta()["profiles"]  # its table state with the same manifest target
    profile = next((n for n, spec in profiles.items() if spec.get("manifest_target_size") == target), None)
    if profile is None:
        raise LookupError(f"{planning_run.run_id}: no profile with manifests rewritten at {target}")
    wide, narrow = _growth_windows(growth)
    rewrite = growth[growth["variant"] == f"iceberg/{profile}"].set_index("query_id")
    parquet = growth[growth["variant"] == PARQUET].set_index("query_id").loc[rewrite.index]
    ice_wide, pq_wide = rewrite[f"planning_ms_median_{wide}"], parquet[f"planning_ms_median_{wide}"]
    below = (
        "far below"
        if (ice_wide < pq_wide / 2).all()
        else "below"
        if (ice_wide < pq_wide).all()
        else "not always below"
    )
    windows = (
        "*Planning near-constant across windows*: see [the planning experiment](planning.md) (run "
        f"`{planning_run.run_id}`): with {target} manifests "
        f"planning {'still grows' if (rewrite['planning_ratio'] > 1).all() else 'does not grow'} "
        f"with the window ({narrow} to {wide}: {', '.join(ratio(r) for r in rewrite['planning_ratio'])} "
        f"for its {spelled(len(rewrite))} queries), but stays {below} Parquet's listing for wide "
        f"windows ({' and '.join(num(v) for v in ice_wide)} ms against "
        f"{' and '.join(num(v) for v in pq_wide)} ms at {wide})."
    )

    # Each optimization's share.
    gains = {setup(v): c.gain(v, "total_ms") for v in c.iceberg if v != i}
    optimized_gain = f"`{setup(o)}` gains {ratio(gains[setup(o)])}" + interval(
        c.gains_ci, o, "total_ms", invert=True
    )
    expiry = c.find("snapshot_expiry")
    single = sorted(((k, g) for k, g in gains.items() if k != setup(o)), key=lambda kg: -kg[1])
    if expiry and len(single) > 1:
        floor = c.gain(expiry, "execution_ms")
        above = [f"`{k}` {ratio(g)}" for k, g in single if g > floor]
        within = [f"`{k}` {ratio(g)}" for k, g in single if g <= floor]
        alone = (
            "; alone, "
            + (listing(above) if above else "none stands out")
            + (
                f"; {listing(within)} {'is' if len(within) == 1 else 'are'} within the noise floor "
                f'({ratio(floor)}, snapshot expiry\'s execution "gain").'
                if within
                else "."
            )
        )
    else:
        alone = f"; {ALONE}."
    share = f"*Each optimization's share* (total gain over `{setup(i)}`): {optimized_gain}{alone}"
    return " ".join([initially, split, after, windows, share]) + "\n"


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
    c = load(results)
    return f"The figures below are from the reference run ({duration(c.run)}, start to finish).\n"


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
