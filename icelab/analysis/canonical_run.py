"""A canonical run and the figures the experiment computes from it, with the lookups every page
figure of it shares.

Every figure is computed from the stored run the way the experiment computes it (`stats`):
medians over the measured rounds, a query's total as its median planning plus its median
execution (`stats.ratios`), geometric means over queries (`stats.geomeans`), gains against the
initial setup (`stats.gains`). The summary is recomputed from measurements.parquet, so a figure
cannot quote a derived CSV that no longer matches its measurements.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import stats
from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.core.contract import MEASUREMENTS
from icelab.core.runs import Run, read_run

PARQUET = "parquet"
VECTORIZATION = "spark.sql.iceberg.vectorization.enabled"
NESTED_PRUNING = "spark.sql.optimizer.nestedSchemaPruning.enabled"


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

    # The three intervals are bootstraps (about a second each at 9,999 resamples): computed when a
    # figure first asks for one, once per loaded run, so a page that shows none does not pay for them.
    @functools.cached_property
    def versus_ci(self) -> pd.DataFrame:
        """stats.geomean_intervals against Parquet, per Iceberg variant (the queries fixed)."""
        return stats.geomean_intervals(self.measurements, PARQUET)

    @functools.cached_property
    def versus_qci(self) -> pd.DataFrame:
        """The same with the queries resampled as well (`over_queries`)."""
        return stats.geomean_intervals(self.measurements, PARQUET, over_queries=True)

    @functools.cached_property
    def gains_ci(self) -> pd.DataFrame:
        """stats.geomean_intervals against the initial setup, per Iceberg variant."""
        iceberg = self.measurements[self.measurements["format"] == "iceberg"]
        return stats.geomean_intervals(iceberg, self.initial)

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

    @property
    def dataset(self) -> str:
        """The dataset the run measured (`?` when its config names none)."""
        return (self.run.config().get("dataset") or {}).get("name", "?")


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
    )


def of_run(run: Run) -> Canonical:
    """A complete canonical run with its figures, cached while its measurements file is unchanged
    (`stats.summarize` is the slow part)."""
    stat = (run.path / MEASUREMENTS).stat()
    return _load(run.path, (stat.st_mtime_ns, stat.st_size))


def short(query_id: str) -> str:
    """`q05` for `q05_nested_filter_projection_day`."""
    return query_id.split("_", 1)[0]


def setup(variant: str) -> str:
    """`initial` for `iceberg/initial`."""
    return variant.split("/", 1)[-1]


def interval(
    intervals: pd.DataFrame, variant: str, part: str, invert: bool = False
) -> tuple[float, float] | None:
    """(low, high) of a geometric mean's bootstrap interval, inverted for a gain; None when a cell
    had too few values for one."""
    rows = intervals[intervals["variant"] == variant] if len(intervals) else intervals
    if rows.empty or pd.isna(rows.iloc[0][f"{part}_ci_low"]):
        return None
    low, high = float(rows.iloc[0][f"{part}_ci_low"]), float(rows.iloc[0][f"{part}_ci_high"])
    return (1 / high, 1 / low) if invert else (low, high)


def shown(c: Canonical, variant: str, part: str = "total_ms") -> str | None:
    """What the workload shows of `variant` against Parquet: `slower` or `faster` when the interval
    with the queries resampled (`versus_qci`) lies wholly above or below 1, else None (not established;
    also when there is no such interval)."""
    rows = c.versus_qci[c.versus_qci["variant"] == variant]
    if rows.empty or pd.isna(rows.iloc[0][f"{part}_ci_low"]):
        return None
    low, high = rows.iloc[0][f"{part}_ci_low"], rows.iloc[0][f"{part}_ci_high"]
    return "slower" if low > 1 else "faster" if high < 1 else None


def faster(c: Canonical, variant: str | None = None) -> tuple[int, int]:
    """(queries faster on `variant` than on Parquet, queries compared): a query is faster when its
    total (median planning + median execution, as `stats.ratios`) is below Parquet's."""
    totals = c.ratio("total_ms", variant or c.optimized).dropna()
    return int((totals < 1).sum()), len(totals)


def rewritten(c: Canonical) -> str:
    """The setup that shows what rewriting the manifests does to planning: `manifest_rewrite`
    (alone) when the run measured it, else the figures' optimized setup."""
    return c.find("manifest_rewrite") or c.optimized


def target_of(c: Canonical, variant: str) -> str:
    """The manifest target size of an Iceberg variant's table state, e.g. `8MB`."""
    return c.meta["profiles"][c.meta["setups"][setup(variant)]["profile"]]["manifest_target_size"]


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


def round_minutes(measurements: pd.DataFrame) -> pd.Series:
    """Minutes from the first to the last `measured_utc` of each round, by (warmup, executed,
    repetition)."""
    at = pd.to_datetime(measurements["measured_utc"])
    rounds = at.groupby([measurements["warmup"], measurements["executed"], measurements["repetition"]])
    return rounds.agg(lambda t: (t.max() - t.min()).total_seconds() / 60)


def order_effect(c: Canonical) -> pd.DataFrame:
    """Per (query, Iceberg variant): its median execution in the measured rounds where it ran
    first of the query's variants, over its median where it did not (`excess`), with both
    medians and the counts. The rotation makes every variant go first in some rounds, so this
    compares a variant with itself: the order's cost, free of what the setups change."""
    executed = counted(c.measurements).query("executed").sort_values("measured_utc")
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
