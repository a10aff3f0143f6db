"""Task `doctor`: the manifest health check and its advice on any Iceberg table
(`python run.py experiment=doctor table=...`, or `icelab doctor TABLE`).

The library is `icelab.health`; this module wires config, session, run directory and
charts. Results: report.json, partitions.parquet, manifests.parquet, env.json, config.yaml
and the two health charts (Figures 6 and 7) in results/runs/doctor/<run_id>/.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from icelab.analysis.calibration import Where
from icelab.bench.context import open_context
from icelab.charts import draw_charts
from icelab.charts.health import write_charts
from icelab.core import run_state
from icelab.core.config import DoctorConfig, doctor_config, parse_size
from icelab.core.provenance import REPO
from icelab.health import journal, scratch
from icelab.health.check import Policy, parse_duration
from icelab.health.console import render
from icelab.health.diagnosis import Diagnosis, diagnose, save
from icelab.health.forecast import doctor_model
from icelab.health.source import resolve


@dataclass(frozen=True)
class Outcome:
    """A finished doctor run: where its files are, what it found, and the exit code it earns."""

    run_dir: Path
    diagnosis: Diagnosis

    @property
    def exit_code(self) -> int:
        return self.diagnosis.exit_code


def policy_of(dcfg: DoctorConfig) -> Policy:
    """The policy the config gives."""
    return Policy(
        rules=dcfg.policy_rules,
        windows=tuple(dcfg.windows),
        retain_us=parse_duration(dcfg.retain) if dcfg.retain else None,
        retain_last=dcfg.retain_last,
        small_file_bytes=parse_size(dcfg.small_file) if dcfg.small_file else None,
    )


@run_state.tracked
def run(cfg: DictConfig) -> Outcome:
    """Check one table (bad input fails before any run directory exists), store and chart.

    Returns:
        The run directory and the diagnosis (its `exit_code`: 0 healthy, 1 action advised).
    """
    dcfg = doctor_config(cfg)
    policy = policy_of(dcfg)
    source = resolve(dcfg.table or "", dcfg.catalog, dcfg.uri, dcfg.warehouse)  # local: before Spark
    ctx = open_context(cfg, data=False)
    results = Path(ctx.paths.results_dir)
    # The calibration of this engine and storage, else the run `icelab costmodel` fits on; its
    # ratios scale the plans measured on the table (icelab/health/anchor.py).
    where = Where.of(ctx.engine.name, cfg.storage.kind, cfg.storage.get("latency_ms"))
    model = doctor_model(where, [results, REPO / "results"])
    diagnosis = diagnose(
        ctx.spark,
        ctx.engine,
        source,
        policy,
        model,
        target=parse_size(dcfg.target) if dcfg.target else None,
        apply=dcfg.apply and not dcfg.copy_table,
        copy=dcfg.copy_table,
        scratch_dir=results / scratch.DIRECTORY if dcfg.scratch_copy or dcfg.copy_table else None,
        keep_copy=dcfg.keep_copy,
        journal_dir=results / journal.DIRECTORY,
        measure_plans=dcfg.measure_plans,
        measure_budget_s=dcfg.measure_budget_s,
    )
    run_dir = ctx.new_run(dcfg.name)
    save(run_dir, diagnosis)
    charts = draw_charts(bool(cfg.charts), write_charts, run_dir)
    if dcfg.json_out == "-":
        print(json.dumps(diagnosis.report() | {"results": str(run_dir)}, indent=1, default=str))
        return Outcome(run_dir, diagnosis)
    if dcfg.json_out:
        shutil.copyfile(run_dir / "report.json", dcfg.json_out)
    print(render(diagnosis))
    print(f"results: {run_dir} ({charts})")
    return Outcome(run_dir, diagnosis)
