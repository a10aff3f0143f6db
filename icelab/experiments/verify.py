"""Experiment `verify`: recheck that a dataset's Parquet and Iceberg tables hold the same
rows, per day, by Spark and by DuckDB, and exit non-zero when they do not."""

from __future__ import annotations

from omegaconf import DictConfig

from icelab.bench.context import open_context
from icelab.core import run_state
from icelab.core.errors import UserError
from icelab.core.results import write_json


@run_state.tracked
def run(cfg: DictConfig) -> None:
    """Verify the configured dataset (building it first if needed)."""
    ctx = open_context(cfg)
    built = ctx.dataset()
    check = ctx.verify(built)
    run_dir = ctx.new_run("verify", built)
    write_json(
        run_dir / "verification.json",
        {
            "ok": check.ok,
            "mismatches": check.mismatches,
            "totals": check.totals(),
            "tables": check.tables(),
            "days": {name: str(days) for name, days in check.days.items()},
        },
    )
    for name, (rows, checksum) in check.totals().items():
        print(f"{name:16s} {rows:>12,} rows  checksum {checksum}  ({check.days[name]})")
    if not check.ok:
        raise UserError(f"tables differ on {len(check.mismatches)} day(s): {check.mismatches[0]}")
    print(
        f"identical: {len(check.readings)} readings agree on all {len(check.day_partitions)} day partitions, "
        f"each read by {check.readers_per_day}"
    )
