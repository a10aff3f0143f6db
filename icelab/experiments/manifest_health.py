"""Task `manifest_health`: report how day partitions spread over manifests, judge it against
the policy (healthy / rewrite advised / rewrite needed), optionally rewrite, report again.

The rewrite runs on a registered copy of the table (a `rewrite_<size>` profile), so the dataset
stays as ingested for every other experiment. Results: partitions.parquet, manifests.parquet,
report.json, env.json, config.yaml and two charts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig
from pyspark.sql import SparkSession

from icelab.bench.context import open_context
from icelab.bench.manifest_stats import health_stats, manifests, partition_counts, stat_rows
from icelab.bench.profiles import Profile, prepare
from icelab.charts import draw_charts
from icelab.charts.health import write_charts
from icelab.core import run_state
from icelab.core.config import HealthConfig, Threshold, health_config, parse_size, profile_configs
from icelab.core.results import write_json, write_parquet
from icelab.health.policy import LEVELS, Judged, judge

# judge and LEVELS are the doctor's verdict (icelab.health.policy): one policy, so the task and
# `icelab doctor` give one verdict on one table; exported as this task's verdict too.
__all__ = ["LEVELS", "Health", "inspect", "judge", "render", "run"]


@dataclass
class Health(Judged):
    """One table state's report (day partitions, as this task's tables have)."""

    def as_json(self) -> dict[str, Any]:
        """The report without the per-row frames."""
        return {
            "state": self.state,
            "table": self.table,
            "manifests": len(self.manifests),
            "manifest_bytes": int(self.manifests.length.sum()),
            "day_partitions": len(self.partitions),
            "stats": self.stats,
            "verdict": self.verdict,
            "reasons": self.reasons,
        }


def inspect(spark: SparkSession, state: str, table: str, rules: dict[str, Threshold]) -> Health:
    """Counts, statistics and verdict for one table state."""
    mans = manifests(spark, table)
    parts = partition_counts(spark, table, mans)
    mans["span"] = mans.span_days / max(len(parts), 1)
    stats = health_stats(parts.exact, parts.bounds, mans.span, mans.length, mans.entries)
    verdict, reasons = judge(stats, rules)
    return Health(state, table, parts, mans, stats, verdict, reasons)


# The console's row labels (the doctor's, for any partition spec, are in icelab.health.diagnosis).
LABELS = {
    "partition": "per day partition",
    "exact": "manifests holding the day",
    "bounds": "manifests planning opens",
    "manifest": "per manifest",
    "span": "span (share of days)",
    "manifest_kb": "size KiB",
    "manifest_entries": "entries",
}


def render(h: Health) -> str:
    """The console report of one state."""
    lines = [
        f"{h.state}: {len(h.manifests)} data manifests ({h.manifests.length.sum() / 1e6:.1f} MB) over "
        f"{len(h.partitions)} day partitions -> {h.verdict.upper()}",
        *stat_rows(h.stats, LABELS, indent=2, width=26),
    ]
    lines += [f"  reason: {r}" for r in h.reasons]
    return "\n".join(lines)


def _save(run_dir: Path, reports: list[Health]) -> None:
    parts = pd.concat([h.partitions.assign(state=h.state) for h in reports], ignore_index=True)
    mans = pd.concat([h.manifests.assign(state=h.state) for h in reports], ignore_index=True)
    write_parquet(run_dir / "partitions.parquet", parts)
    write_parquet(run_dir / "manifests.parquet", mans)
    write_json(run_dir / "report.json", [h.as_json() for h in reports])


@run_state.tracked
def run(cfg: DictConfig) -> Path:
    """Report, optionally rewrite (on a copy) and report again; store and chart.

    Returns:
        The run directory.
    """
    hcfg: HealthConfig = health_config(cfg)
    profiles = profile_configs(cfg)
    ctx = open_context(cfg)
    built = ctx.dataset()
    name, profile = next(iter(profiles.items()))
    spark, ds = ctx.spark, built.dataset
    reports = [inspect(spark, name, prepare(spark, ds, Profile.of(name, profile)), hcfg.rules)]
    if hcfg.rewrite_target is not None:
        after = f"rewrite_{hcfg.rewrite_target.lower()}"
        table = prepare(spark, ds, Profile(after, parse_size(hcfg.rewrite_target)))
        reports.append(inspect(spark, after, table, hcfg.rules))
    run_dir = ctx.new_run(hcfg.name, built)
    _save(run_dir, reports)
    charts = draw_charts(bool(cfg.charts), write_charts, run_dir)
    print("\n\n".join(render(h) for h in reports))
    print(f"results: {run_dir} ({charts})")
    return run_dir
