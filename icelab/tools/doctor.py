"""`icelab doctor TABLE`: manifest health and rewrite advice on any Iceberg table, from its
metadata only (no data read), without running a benchmark.

    icelab doctor /data/warehouse/db/events                  # a Hadoop table's directory
    icelab doctor /data/warehouse/db/events/metadata/v12.metadata.json
    icelab doctor db.events --warehouse /data/warehouse       # a Hadoop catalog's table
    icelab doctor db.events --catalog hive --uri thrift://metastore:9083
    icelab doctor db.events --catalog rest --uri http://catalog:8181
    icelab doctor /data/warehouse/db/events --apply           # run the advice, then check again
    icelab doctor /data/warehouse/db/events --copy            # the same on a registered copy

The same as `python run.py experiment=doctor table=...` (conf/experiment/doctor.yaml); the report
goes to the console and to results/runs/doctor/<run_id>/ (docs/doctor.md).

Exit status: 0 healthy, 1 an action is advised (a manifest rewrite worth running, or snapshot
expiry), 2 bad input (one line on stderr), 4 `--apply` left some window planning worse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from omegaconf import DictConfig, OmegaConf

from icelab.core.cli import CONF_DIR, check_overrides
from icelab.core.config import manifest_health_rules
from icelab.core.errors import UserError


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = argparse.ArgumentParser(
        prog="icelab doctor",
        description="Manifest health and rewrite advice on any Iceberg table (exit 0 healthy, "
        "1 action advised, 2 bad input, 4 --apply made a window's planning worse).",
    )
    p.add_argument(
        "table", help="a table directory or metadata.json (catalog hadoop), or <namespace>.<table>"
    )
    p.add_argument("--catalog", choices=("hadoop", "hive", "rest"), default="hadoop")
    p.add_argument("--uri", help="thrift://host:9083 (hive) or http://host:8181 (rest)")
    p.add_argument("--warehouse", help="the catalog's warehouse (hadoop: when the table is <ns>.<table>)")
    p.add_argument(
        "--window",
        action="append",
        default=[],
        help="a time window to predict planning for, e.g. 1d (repeatable; default 1d, 7d, 30d)",
    )
    p.add_argument("--retain", help="expire snapshots older than this, e.g. 7d (default: the table's own)")
    p.add_argument("--retain-last", type=int, help="snapshots always kept (default: the table's own, else 1)")
    p.add_argument("--small-file", help="data files below this size are small (default: 75%% of the target)")
    p.add_argument(
        "--target", help="advise this manifest target size (e.g. 256KB) instead of the computed one"
    )
    p.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=ADVISE:NEED",
        help="override a verdict rule, e.g. bounds_p90=4:16 (the others stay manifest_health's)",
    )
    p.add_argument("--apply", action="store_true", help="run the advised statements, then check again")
    p.add_argument("--copy", action="store_true", help="apply on a copy registered from the current metadata")
    p.add_argument("--results", default=None, help="results directory (default: results)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any Hydra override, e.g. engine.driver_memory=4g (repeatable)",
    )
    return p


def _rules(items: list[str]) -> dict[str, dict[str, float]] | None:
    if not items:
        return None
    rules = {k: v.model_dump() for k, v in manifest_health_rules().items()}
    for item in items:
        key, sep, levels = item.partition("=")
        advise, colon, need = levels.partition(":")
        try:
            rules[key.strip()] = {"advise": float(advise), "need": float(need)}
        except ValueError:
            raise UserError(f"bad --rule '{item}': use KEY=ADVISE:NEED, e.g. bounds_p90=4:16") from None
        if not sep or not colon:
            raise UserError(f"bad --rule '{item}': use KEY=ADVISE:NEED, e.g. bounds_p90=4:16")
    return rules


def compose(args: argparse.Namespace) -> DictConfig:
    """The run's config: conf/ with experiment=doctor and the `--set` overrides, then the options."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    overrides = ["experiment=doctor", *args.set]
    check_overrides(overrides)  # one line for a bad override, as run.py gives
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=overrides)
    values = {
        "table": args.table,
        "experiment.catalog": args.catalog,
        "experiment.uri": args.uri,
        "experiment.warehouse": args.warehouse,
        "experiment.retain": args.retain,
        "experiment.retain_last": args.retain_last,
        "experiment.small_file": args.small_file,
        "experiment.target": args.target,
        "experiment.rules": _rules(args.rule),
        "experiment.apply": args.apply,
        "experiment.copy": args.copy,
    }
    if args.window:
        values["experiment.windows"] = args.window
    if args.results:
        values["paths.results_dir"] = args.results
    for key, value in values.items():
        if value is not None or key in ("experiment.uri", "experiment.warehouse"):
            OmegaConf.update(cfg, key, value, merge=False)
    return cfg


def main(argv: Sequence[str] | None = None) -> int:
    """Check one table; 0 healthy, 1 an action is advised, 2 bad input (one line on stderr), 4 what
    `--apply` ran made some window's planning worse."""
    args = parser().parse_args(argv)
    from pyspark.sql import SparkSession

    from icelab.experiments import doctor

    ours = SparkSession.getActiveSession() is None
    try:
        outcome = doctor.run(compose(args))
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    finally:
        active = SparkSession.getActiveSession()
        if ours and active is not None:  # a session this command started (not a caller's)
            active.stop()
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
