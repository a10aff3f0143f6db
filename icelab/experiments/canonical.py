"""Task `canonical` (experiment canonical): the 23 canonical queries on Parquet and on Iceberg
under each reading setup, planning apart from execution (the study's Figures 8 and 9).

Each query runs at the window its header names (`-- window: 7d`). Parquet runs once, with
Spark's defaults: it is the baseline every Iceberg setup is compared with. Writes, under
results/runs/<experiment>/<run_id>/: the contract files, summary.csv, versus_parquet.csv (per
query), setups.csv (geometric means per setup), gains.csv (each setup against the initial one),
plan_check.csv (what reached the scans), answers.json and the charts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig

from icelab.analysis import stats
from icelab.bench import answers, page_cache
from icelab.bench.context import open_context
from icelab.bench.protocol import query_cases
from icelab.bench.recorder import Recorder
from icelab.bench.store_guard import bounded
from icelab.bench.variants import check_setup_profiles, setup_variants, table_state
from icelab.bench.windows import check_window, header, load_query, query_ids, window_in_data
from icelab.charts import draw_charts
from icelab.charts.canonical import write_charts
from icelab.core import run_state
from icelab.core.config import (
    CanonicalConfig,
    ProfileConfig,
    SetupConfig,
    canonical_config,
    dataset_config,
    profile_configs,
    protocol_config,
    setup_configs,
)
from icelab.core.errors import UserError
from icelab.core.results import write_csv

PARQUET = "parquet"
PLAN_FACTS = ["pushed_filters", "nested_filters_pushed", "read_leaves", "nested_pruned", "vectorized"]


def query_window(query_id: str) -> str:
    """The window a canonical query's header names.

    Raises:
        UserError: when the header has no valid `-- window:` line.
    """
    window = header(load_query(query_id)).get("window")
    if window is None:
        raise UserError(f"query '{query_id}' has no '-- window:' header line")
    check_window(window)
    return window


def _validate(
    ccfg: CanonicalConfig, setups: dict[str, SetupConfig], profiles: dict[str, ProfileConfig]
) -> dict[str, str]:
    """Check everything the user typed before Spark starts; return {query id: its window}."""
    check_setup_profiles(setups, profiles)
    for role in ("initial", "optimized"):
        name = getattr(ccfg, role)
        if name not in setups:
            raise UserError(
                f"experiment.{role}='{name}' is not a selected setup (selected: {', '.join(setups)})"
            )
    ids = query_ids(ccfg.queries)
    for name, setup in setups.items():
        for key in setup.plant:
            if not any(key in (q, q.split("_", 1)[0]) for q in ids):
                raise UserError(
                    f"setup.{name}.plant names query '{key}', which is not among experiment.queries"
                )
    return {query_id: query_window(query_id) for query_id in ids}


def plan_check(measurements: pd.DataFrame) -> pd.DataFrame:
    """Per (query, variant): the plan facts of its first successful measurement."""
    ok = measurements[measurements["status"] == "ok"]
    return ok.drop_duplicates(["query_id", "variant"])[["query_id", "variant", *PLAN_FACTS]]


@run_state.tracked
def run(cfg: DictConfig) -> Path:
    """Measure every (query, variant) for the protocol's rounds; compare, check and chart.

    Returns:
        The run directory.
    """
    ccfg, protocol = canonical_config(cfg), protocol_config(cfg)
    setups, profiles = setup_configs(cfg), profile_configs(cfg)
    windows_of = _validate(ccfg, setups, profiles)
    # A query's window is part of the query: one longer than the whole data reads all of it.
    dcfg = dataset_config(cfg)
    queries = [
        (q, window_in_data(w, ccfg.end, dcfg, longer_ok=True, what=f"query {q}: "))
        for q, w in windows_of.items()
    ]
    ctx = open_context(cfg)
    built = ctx.dataset()
    ds = built.dataset
    progress = bool(cfg.progress)
    variant_list = setup_variants(ctx.spark, ds, setups, profiles, ccfg.parquet, progress)
    all_cases = query_cases(queries, variant_list, rotate=True)
    run_dir = ctx.new_run(ccfg.name, built)
    base = {"run_id": run_dir.name, "experiment": ccfg.name, "dataset": f"{ds.config.name}-{ds.hash}"}
    rounds = protocol.warmups + protocol.repetitions
    recorder = Recorder(
        run_dir,
        {
            **base,
            "planned_rows": len(all_cases) * rounds,
            "protocol": protocol.model_dump(),
            "queries": {c.query_id: c.query_sha256 for c in all_cases},
            "query_windows": {q: w.name for q, w in queries},
            "windows": {w.name: [w.start.isoformat(), w.end.isoformat()] for _, w in queries},
            "variants": {v.label: table_state(ctx.spark, v) for v in variant_list},
            "setups": {name: s.model_dump() for name, s in setups.items()},
            "profiles": {name: p.model_dump() for name, p in profiles.items()},
            "figures": {"initial": ccfg.initial, "optimized": ccfg.optimized},
        },
    )
    print(f"{ccfg.name}: {len(all_cases)} cases x {rounds} rounds -> {run_dir}")
    if protocol.warm_cache:
        recorder.info["page_cache"] = page_cache.warm(ds.uri, progress)
    recorder.record(ctx.spark, all_cases, protocol, base, progress, data_uri=ds.uri)
    measurements = pd.DataFrame(recorder.rows)
    windows = list({w.name: w for _, w in queries}.values())
    with bounded(ctx.spark, "answers") as phase:
        checked = answers.check_run(run_dir, measurements, ds, windows, cfg.verify, progress, phase)
    recorder.close(answers_agree=all(rec["agree"] for rec in checked))
    print(
        finish(
            run_dir,
            measurements,
            protocol.unstable_iqr,
            ccfg,
            draw=bool(cfg.charts),
            keep_faulted=protocol.keep_faulted,
        )
    )
    print(answers.verdict(checked))
    failed = int((measurements["status"] != "ok").sum())
    if failed:
        print(f"failed measurements: {failed} (their errors are in measurements.parquet)")
    answers.raise_if_differ(checked, run_dir, bool(cfg.verify.allow_duckdb_errors))
    return run_dir


def finish(
    run_dir: Path,
    measurements: pd.DataFrame,
    unstable_iqr: float,
    ccfg: CanonicalConfig,
    draw: bool = True,
    keep_faulted: bool = False,
) -> str:
    """Write the tables and charts (unless not `draw`) of a finished run; return the console report."""
    summary = stats.summarize(measurements, unstable_iqr, keep_faulted)
    order = {v: i for i, v in enumerate(dict.fromkeys(measurements["variant"]))}  # parquet, then setups
    summary = summary.sort_values(
        ["query_id", "variant"], key=lambda c: c.map(order) if c.name == "variant" else c
    )
    write_csv(run_dir / "summary.csv", summary)
    facts = plan_check(measurements)
    write_csv(run_dir / "plan_check.csv", facts)
    initial = f"iceberg/{ccfg.initial}"
    iceberg = measurements[measurements["format"] == "iceberg"]
    gains = _with_intervals(stats.gains(summary, initial), iceberg, initial)
    write_csv(run_dir / "gains.csv", gains)
    versus = setups = None
    if PARQUET in set(summary["variant"]):
        versus = stats.ratios(summary, PARQUET)
        write_csv(run_dir / "versus_parquet.csv", versus)
        setups = _with_intervals(
            stats.geomeans(versus[versus["variant"] != PARQUET], summary), measurements, PARQUET
        )
        write_csv(run_dir / "setups.csv", setups)
    charts = draw_charts(draw, write_charts, run_dir)
    lines = [report_queries(summary, facts, ccfg), ""]
    if setups is not None:
        lines += [report_setups(setups), ""]
    lines += [report_gains(gains, initial), ""]
    lines.append(f"results: {run_dir} ({charts})")
    return "\n".join(lines)


def _with_intervals(geomeans: pd.DataFrame, measurements: pd.DataFrame, reference: str) -> pd.DataFrame:
    """`geomeans` with the bootstrap interval of each geometric mean (`<part>_ci_low`, `_ci_high`)."""
    intervals = stats.geomean_intervals(measurements, reference)
    if intervals.empty:
        return geomeans
    ci = [c for c in intervals.columns if "_ci_" in c]
    return geomeans.merge(intervals[["variant", *ci]], on="variant", how="left")


def _ci(rec: dict[str, Any], part: str, invert: bool = False) -> str:
    low, high = rec.get(f"{part}_ci_low"), rec.get(f"{part}_ci_high")
    if low is None or pd.isna(low):
        return ""
    low, high = (1 / high, 1 / low) if invert else (low, high)
    return f" [{low:.2f}, {high:.2f}]"


def _ms(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:,.0f}"


def report_queries(summary: pd.DataFrame, facts: pd.DataFrame, ccfg: CanonicalConfig) -> str:
    """Median planning + execution ms per query: Parquet, initial and optimized, with plan facts."""
    shown = [PARQUET, f"iceberg/{ccfg.initial}", f"iceberg/{ccfg.optimized}"]
    med = summary.set_index(["query_id", "variant"])
    fx = facts.set_index(["query_id", "variant"])
    rows = []
    for query_id in summary["query_id"].drop_duplicates():
        row = {"query": query_id[:30], "window": med.loc[query_id]["window"].iloc[0]}
        for variant in shown:
            if (query_id, variant) in med.index:
                rec = med.loc[(query_id, variant)]
                cell = f"{_ms(rec['planning_ms_median'])}+{_ms(rec['execution_ms_median'])}"
                row[variant] = cell + ("  ERR" if rec["errors"] else "")
        for variant in shown[1:]:
            if (query_id, variant) in fx.index:
                f = fx.loc[(query_id, variant)]
                pruned = {True: "pruned", False: "whole", None: "-"}.get(_none(f["nested_pruned"]))
                row[f"{variant.split('/')[1]} plan"] = (
                    f"nested filters {f['nested_filters_pushed']}, {pruned}, "
                    f"{'vec' if f['vectorized'] else 'row'}, {f['read_leaves']} leaves"
                )
        rows.append(row)
    table = pd.DataFrame(rows).to_string(index=False)
    return "median planning+execution ms per query; plan facts (what reached the scan)\n" + table


def _none(value: Any) -> Any:
    return None if value is None or pd.isna(value) else bool(value)


def _x(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else f"{value:.2f}x"


def report_setups(setups: pd.DataFrame) -> str:
    """Iceberg / Parquet per setup: geometric means, the worst query, the planning share."""
    lines = [
        "Iceberg / Parquet, geometric mean over queries (planning, execution, total) [95% bootstrap "
        "interval, when every cell has 5 values]; worst query"
    ]
    for rec in setups.to_dict("records"):
        share = "-" if rec["planning_share"] is None else f"{rec['planning_share']:.0%}"
        cells = [f"{_x(rec[f'{t}_geomean'])}{_ci(rec, t)}" for t in stats.PARTS]
        lines.append(
            f"  {rec['variant']:<26} {'  '.join(cells)}   worst {rec['worst_query']} "
            f"{_x(rec['worst_total_ratio'])}   planning share {share}"
        )
    return "\n".join(lines)


def report_gains(gains: pd.DataFrame, initial: str) -> str:
    """Each setup against the initial one: geometric-mean speed-up (initial / setup)."""
    lines = [f"speed-up over {initial}, geometric mean over queries (planning, execution, total)"]
    for rec in gains.to_dict("records"):
        cells = [
            "-"
            if rec[f"{t}_geomean"] is None
            else f"{1 / rec[f'{t}_geomean']:.2f}x{_ci(rec, t, invert=True)}"
            for t in stats.PARTS
        ]
        lines.append(f"  {rec['variant']:<26} {'  '.join(cells)}")
    return "\n".join(lines)
