"""Task `planning` (experiments manifest_8mb, manifest_sweep, smoke): time windows x table
variants, planning measured apart from execution, with each format's scan metrics.

Writes, under results/runs/<experiment>/<run_id>/: measurements.parquet (the contract),
env.json, config.yaml, run.json, summary.csv, growth.csv, overhead.csv, answers.json and the
charts. An interrupted run keeps every finished round.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig
from pyspark.sql import SparkSession
from tqdm import tqdm

from icelab.analysis import stats
from icelab.bench import answers
from icelab.bench.context import Context, open_context
from icelab.bench.measure import overhead_pairs
from icelab.bench.protocol import Case, cases
from icelab.bench.recorder import Recorder
from icelab.bench.store_guard import Phase, bounded
from icelab.bench.variants import Variant, settings, table_state, variants
from icelab.bench.windows import Window, load_query, window_in_data
from icelab.charts import draw_charts
from icelab.core import run_state
from icelab.core.config import (
    DatasetConfig,
    PlanningConfig,
    ProtocolConfig,
    dataset_config,
    planning_config,
    profile_configs,
    protocol_config,
)
from icelab.core.results import write_csv


def measure_overhead(
    spark: SparkSession,
    all_cases: list[Case],
    window: str,
    pairs: int,
    progress: bool = True,
    phase: Phase | None = None,
) -> pd.DataFrame:
    """measure() against a plain collect of the same query, per variant and query, at one window;
    between cases, `phase` stops it when the store was lost (`store_guard`). A pair that ran
    across a store outage the phase met is marked (`faults=outage`, `faulted`) and left out of
    the report's medians."""
    phase = phase or Phase("overhead pairs")  # unbounded: no store to lose
    rows = []
    chosen = [c for c in all_cases if c.window.name == window] if pairs else []
    # Each pair executes twice: through a slow store that is minutes, so it has its bar.
    for case in tqdm(chosen, desc="overhead pairs", unit="case", disable=not progress or not chosen):
        phase.check()
        with settings(spark, case.variant):
            for pair in overhead_pairs(spark, case.sql, pairs):
                rows.append({"query_id": case.query_id, "variant": case.variant.label, **pair})
                if None in (pair["measured_total_ms"], pair["plain_ms"]):
                    phase.check(failed=True)  # a failed side: is the store still there?
    for row in rows:
        across = phase.across(*row.pop("span_s"))
        row |= {"faults": "outage" if across else None, "faulted": across}
    marked = sum(row["faulted"] for row in rows)
    if marked:
        phase.note = f"; {marked} overhead pair{'s' if marked > 1 else ''} measured across it, marked"
    columns = ["query_id", "variant", "pair", "measured_total_ms", "plain_ms", "faults", "faulted"]
    frame = pd.DataFrame(rows, columns=columns)
    timed = ["measured_total_ms", "plain_ms"]
    frame[timed] = frame[timed].astype(float)  # a failed side is None: its pair's overhead is NaN
    frame["overhead_ms"] = frame["measured_total_ms"] - frame["plain_ms"]
    return frame


def _fmt(value: Any, unstable: bool = False) -> str:
    if value is None or pd.isna(value):
        return "-"
    return f"{value:,.0f}{'~' if unstable else ''}"


def _cells(part: pd.DataFrame, windows: list[str]) -> pd.DataFrame:
    """`part`'s cells by variant and window; "-" where no row counts (its one round failed: an
    error row, a store outage)."""
    table = part.pivot(index="variant", columns="window", values="cell")
    return table.reindex(columns=windows, fill_value="-").fillna("-")


def report(
    summary: pd.DataFrame, growth: pd.DataFrame, overhead: pd.DataFrame, ratio: tuple[str, str]
) -> str:
    """Console tables: median planning per variant and window, manifests scanned, growth."""
    lines = []
    order = summary.drop_duplicates("window").sort_values("window_hours")["window"].tolist()
    for query, part in summary.groupby("query_id", sort=False):
        cells = part.assign(
            cell=[
                _fmt(v, u)
                for v, u in zip(part["planning_ms_median"], part["planning_ms_unstable"], strict=True)
            ]
        )
        table = _cells(cells, order)
        lines += [f"{query}: median planning ms (~ may be unstable: IQR > threshold)", table.to_string(), ""]
        man = part[part["format"] == "iceberg"].assign(
            cell=lambda d: [
                f"{_fmt(s)}/{_fmt(t)}"
                for s, t in zip(d["manifests_scanned"], d["manifests_total"], strict=True)
            ]
        )
        if not man.empty:
            table = _cells(man, order)
            lines += [f"{query}: manifests scanned / total", table.to_string(), ""]
    wide, narrow = ratio
    lines.append(f"planning growth {wide} / {narrow} (harness; Iceberg's own clock)")
    for rec in growth.to_dict("records"):
        ice = rec["iceberg_planning_ratio"]
        # A window whose every row met a store fault has no median: say so rather than "nanx".
        growth_text = (
            "no rows left (all marked faulted or failed)"
            if pd.isna(rec["planning_ratio"])
            else f"{rec['planning_ratio']:6.2f}x" + ("" if pd.isna(ice) else f"  ({ice:.2f}x)")
        )
        lines.append(f"  {rec['query_id']:<22} {rec['variant']:<28} {growth_text}")
    # A pair measured across a store outage is marked; older overhead.csv files have no column.
    clean = overhead[~overhead["faulted"].astype(bool)] if "faulted" in overhead else overhead
    if not clean.empty:
        ov = clean.groupby("variant")["overhead_ms"].median()
        plain = clean.groupby("variant")["plain_ms"].median()
        lines.append("measure() overhead vs a plain collect (median of pairs)")
        for variant in ov.index:
            lines.append(f"  {variant:<28} {ov[variant]:+8.1f} ms on {plain[variant]:,.0f} ms")
    return "\n".join(lines)


@dataclass(frozen=True)
class Effect:
    """What a run's planning medians say about the study's effect (`judge_effect`)."""

    shown: bool
    leaning: bool  # the medians lean the effect's way, whether or not beyond the rounds' spread
    wide: str
    narrow: str
    base: str  # the as-ingested variant
    at_wide: dict[str, float]  # variant -> median planning ms over the queries, base first
    at_narrow: dict[str, float]
    parquet_growth: float  # Parquet's median planning at the wide window over the narrow one


def judge_effect(summary: pd.DataFrame, ratio: tuple[str, str]) -> Effect | None:
    """Whether this run shows the study's effect: at the wide window every rewritten Iceberg
    layout plans faster than the table as ingested, and Parquet's planning grows from the narrow
    window to the wide one, each beyond the rounds' spread. None when the run has no as-ingested
    table, no rewrite or no Parquet to judge by.

    Beyond the spread: a rewrite's upper quartile lies below the as-ingested table's lower one,
    and Parquet's lower quartile at the wide window above its upper one at the narrow window
    (each the median over the queries of their rounds' quartiles). Medians that only lean that
    way (`leaning`) are not shown: on a small table they lean either way from run to run.

    The wide window, because that is where the study places the rewrite's gain ("larger time
    windows take relatively less time in planning", Figure 10). At the narrow window the gain is
    a table's shape: a day reads one rewritten manifest, which on a small table spans months.
    """
    wide, narrow = ratio
    ice = summary[summary["format"] == "iceberg"].groupby(["window", "variant"])
    medians = ice["planning_ms_median"].median()
    at = medians.get(wide, pd.Series(dtype=float))
    at_narrow = medians.get(narrow, pd.Series(dtype=float))
    base = next((v for v in at.index if v.endswith("/as_ingested")), None)
    rewrites = [v for v in at.index if v != base and "/rewrite_" in v]
    pq_rounds = summary[summary["format"] == "parquet"].groupby("window")
    pq = pq_rounds["planning_ms_median"].median()
    if base is None or not rewrites or narrow not in pq.index or wide not in pq.index:
        return None
    growth = float(pq[wide] / pq[narrow])
    leaning = all(at[v] < at[base] for v in rewrites) and growth > 1
    low, high = ice["planning_ms_q1"].median()[wide], ice["planning_ms_q3"].median()[wide]
    pq_low, pq_high = pq_rounds["planning_ms_q1"].median(), pq_rounds["planning_ms_q3"].median()
    apart = all(high[v] < low[base] for v in rewrites) and pq_low[wide] > pq_high[narrow]
    return Effect(
        shown=leaning and apart,
        leaning=leaning,
        wide=wide,
        narrow=narrow,
        base=base,
        at_wide={v: float(at[v]) for v in [base, *rewrites]},
        at_narrow={v: float(at_narrow[v]) for v in [base, *rewrites] if v in at_narrow},
        parquet_growth=growth,
    )


def effect_line(summary: pd.DataFrame, ratio: tuple[str, str]) -> str | None:
    """`judge_effect` in one line (`effect_text`); None when there is nothing to judge by."""
    e = judge_effect(summary, ratio)
    return None if e is None else effect_text(e)


def effect_text(e: Effect) -> str:
    """An `Effect` in one line, with the narrow window's medians too, so a reader sees both."""
    rewritten = ", ".join(f"{v} {ms:,.0f} ms" for v, ms in e.at_wide.items() if v != e.base)
    narrow_ms = " and ".join(f"{ms:,.0f}" for ms in e.at_narrow.values())
    verdict = "shown" if e.shown else "not shown beyond the rounds' spread" if e.leaning else "not shown"
    return (
        f"the study's effect: {verdict}. At {e.wide}: {e.base} plans in "
        f"{e.at_wide[e.base]:,.0f} ms, {rewritten} (at {e.narrow}: {narrow_ms} ms); Parquet's planning grows "
        f"{e.parquet_growth:.1f}x from {e.narrow} to {e.wide} (medians over the queries)."
    )


def size_note(summary: pd.DataFrame, tables: dict[str, dict[str, Any]], window: str) -> list[str]:
    """Lines that explain a rewritten layout planning no faster than the table as ingested at the
    window the effect is judged at: the study's effect needs manifests large enough that reading
    them all costs more than opening a few, which a small table does not have.

    Args:
        summary: `stats.summarize` of the run.
        tables: per variant label, its table state (`variants.table_state`: manifests, bytes).
        window: the window `effect_line` judges at (the wide one of the run's ratio).
    """
    at = summary[(summary["window"] == window) & (summary["format"] == "iceberg")]
    medians = at.groupby("variant")["planning_ms_median"].median()
    base = next((v for v in medians.index if v.endswith("/as_ingested")), None)
    if base is None or base not in tables:
        return []
    slower = [v for v in medians.index if v != base and medians[v] >= medians[base]]
    if not slower:
        return []
    state = tables[base]
    count = state.get("manifests") or 0
    lines = [
        f"note: at {window}, {', '.join(slower)} planned no faster than {base} "
        f"({', '.join(f'{medians[v]:,.0f}' for v in slower)} vs {medians[base]:,.0f} ms, medians).",
        f"  As ingested, this table's manifests hold {(state.get('manifest_bytes') or 0) / 1e6:.1f} MB "
        f"in all ({count:,} manifest{'' if count == 1 else 's'}): reading every one costs little, so "
        "rewriting them cannot pay here.",
        "  The study's effect needs large manifests: dataset=medium (the reference run in "
        "docs/planning.md) and the metadata states of 36k to 10M files (docs/metadata-scale.md).",
    ]
    return lines


def _validate_inputs(pcfg: PlanningConfig, dataset: DatasetConfig) -> list[Window]:
    """Check the queries and windows before Spark starts (the config checked the window names);
    return the windows."""
    for query in pcfg.queries:
        load_query(query)
    # A window's length is what this experiment varies: one longer than the data is an error.
    return [window_in_data(w, pcfg.end, dataset) for w in pcfg.windows]


@run_state.tracked
def run(cfg: DictConfig) -> Path:
    """Measure every (query, window, variant) for the protocol's rounds; store and chart.

    Returns:
        The run directory.
    """
    pcfg, protocol = planning_config(cfg), protocol_config(cfg)
    profiles = profile_configs(cfg)
    windows = _validate_inputs(pcfg, dataset_config(cfg))
    ctx = open_context(cfg)
    built = ctx.dataset()
    ds = built.dataset
    progress = bool(cfg.progress)
    variant_list = variants(ctx.spark, ds, profiles, pcfg.parquet, progress)
    all_cases = cases(pcfg.queries, windows, variant_list)
    run_dir = ctx.new_run(pcfg.name, built)
    base = {"run_id": run_dir.name, "experiment": pcfg.name, "dataset": f"{ds.config.name}-{ds.hash}"}
    recorder = Recorder(
        run_dir, _run_info(ctx, pcfg, protocol, base, windows, variant_list, all_cases, profiles)
    )
    print(
        f"{pcfg.name}: {len(all_cases)} cases x {protocol.warmups + protocol.repetitions} rounds -> {run_dir}"
    )
    recorder.record(ctx.spark, all_cases, protocol, base, progress, data_uri=ds.uri)
    _finish(ctx, pcfg, protocol, recorder, ds, windows, all_cases, run_dir)
    return run_dir


def _run_info(
    ctx: Context,
    pcfg: PlanningConfig,
    protocol: ProtocolConfig,
    base: dict[str, str],
    windows: list[Window],
    variant_list: list[Variant],
    all_cases: list[Case],
    profiles: dict[str, Any],
) -> dict[str, Any]:
    rounds = protocol.warmups + protocol.repetitions
    return {
        **base,
        "planned_rows": len(all_cases) * rounds,
        "protocol": protocol.model_dump(),
        "queries": {c.query_id: c.query_sha256 for c in all_cases},
        "windows": {w.name: [w.start.isoformat(), w.end.isoformat()] for w in windows},
        "variants": {v.label: table_state(ctx.spark, v) for v in variant_list},
        "profiles": {name: p.model_dump() for name, p in profiles.items()},
        "ratio": list(pcfg.ratio),
    }


def _finish(
    ctx: Context,
    pcfg: PlanningConfig,
    protocol: ProtocolConfig,
    recorder: Recorder,
    ds: Any,
    windows: list[Window],
    all_cases: list[Case],
    run_dir: Path,
) -> None:
    progress = bool(ctx.cfg.progress)
    with bounded(ctx.spark, "overhead pairs") as phase:
        overhead = measure_overhead(
            ctx.spark, all_cases, protocol.overhead_window, protocol.overhead_pairs, progress, phase
        )
    write_csv(run_dir / "overhead.csv", overhead)
    measurements = pd.DataFrame(recorder.rows)
    with bounded(ctx.spark, "answers") as phase:
        checked = answers.check_run(run_dir, measurements, ds, windows, ctx.cfg.verify, progress, phase)
    recorder.close(answers_agree=all(rec["agree"] for rec in checked))
    summary = stats.summarize(measurements, protocol.unstable_iqr, protocol.keep_faulted)
    write_csv(run_dir / "summary.csv", summary)
    growth = stats.growth(summary, *pcfg.ratio)
    write_csv(run_dir / "growth.csv", growth)
    charts = draw_charts(bool(ctx.cfg.charts), _write_charts, run_dir)
    print(report(summary, growth, overhead, pcfg.ratio))
    effect = effect_line(summary, tuple(pcfg.ratio))
    if effect:
        print(effect)
    for line in size_note(summary, recorder.info["variants"], pcfg.ratio[0]):
        print(line)
    print(answers.verdict(checked))
    print(f"results: {run_dir} ({len(recorder.rows)} rows; {charts})")
    answers.raise_if_differ(checked, run_dir, bool(ctx.cfg.verify.allow_duckdb_errors))


def _write_charts(run_dir: Path) -> list[Path]:
    """The run's charts (icelab.charts.planning), imported only when drawn: matplotlib's import
    costs about 0.8 s of CPU, which a run with charts=false (most of the tests' runs) never uses."""
    from icelab.charts.planning import write_charts

    return write_charts(run_dir)
