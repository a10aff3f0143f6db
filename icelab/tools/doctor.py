"""`icelab doctor TABLE`: manifest health and rewrite advice on any Iceberg table, from its
metadata only (no data read), without running a benchmark.

    icelab doctor /data/warehouse/db/events                  # a Hadoop table's directory
    icelab doctor /data/warehouse/db/events/metadata/v12.metadata.json
    icelab doctor db.events --warehouse /data/warehouse       # a Hadoop catalog's table
    icelab doctor db.events --catalog hive --uri thrift://metastore:9083
    icelab doctor db.events --catalog rest --uri http://catalog:8181
    icelab doctor /data/warehouse/db/events --apply           # run the advice, then check again
    icelab doctor /data/warehouse/db/events --measure-plans 0 # do not time plans on the table
    icelab doctor /data/warehouse/db/events --measure-budget none  # time every window, however long
    icelab doctor /data/warehouse/db/events --copy            # the same on a scratch copy
    icelab doctor /data/warehouse/db/events --no-copy         # predict the after, measure no copy
    icelab doctor /wh/db/events /wh/db/orders                 # several tables, one Spark session
    icelab doctor --namespace db --warehouse /data/warehouse  # every table of a namespace

The same as `python run.py experiment=doctor table=...` (conf/experiment/doctor.yaml); the report
goes to the console and to results/runs/doctor/<run_id>/ (docs/doctor.md). The rewrite the doctor
means is measured on a scratch copy of the table's metadata, in a catalog of icelab's own under
the results directory (icelab/health/scratch.py): nothing is written to the table or its catalog.

Exit status: 0 healthy, 1 an action is advised (manifest rewrite or snapshot expiry), 2 bad input
(one line on stderr), 3 a broken table (a metadata file, manifest list or manifest missing or
unreadable: one line on stderr naming it; nothing written; or a table the doctor could not check,
one line), 4 `--apply` left some window planning worse (said in the report), 5 `--apply` lost a
commit race to another writer with no retry left (one line on stderr; nothing of that statement
committed, the manifest target put back). Several tables are checked in one Spark session, each
with its own run directory, then a summary; the exit status is the worst table's (the highest).
"""

from __future__ import annotations

import argparse
import copy
import functools
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from icelab.core.cli import CONF_DIR, check_overrides
from icelab.core.config import manifest_health_rules
from icelab.core.errors import UserError
from icelab.health.broken import EXIT_BROKEN, BrokenTable

EXIT_BAD_INPUT = 2  # health.diagnosis's, not imported: it loads pyspark, and --help should not


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = argparse.ArgumentParser(
        prog="icelab doctor",
        description="Manifest health and rewrite advice on Iceberg tables (exit 0 healthy, "
        "1 action advised, 2 bad input, 3 broken table: a metadata file, manifest list or manifest "
        "missing or unreadable, 4 --apply made a window's planning worse, 5 --apply lost a commit race "
        "to another writer with no retry left; with several tables, the worst).",
    )
    p.add_argument(
        "table",
        nargs="*",
        help="a table directory or metadata.json (catalog hadoop), or <namespace>.<table>; several are "
        "checked in one Spark session",
    )
    p.add_argument(
        "--namespace",
        action="append",
        default=[],
        help="check every table of this catalog namespace (repeatable; hadoop: with --warehouse)",
    )
    p.add_argument("--catalog", choices=("hadoop", "hive", "rest"), default="hadoop")
    p.add_argument("--uri", help="thrift://host:9083 (hive) or http://host:8181 (rest)")
    p.add_argument("--warehouse", help="the catalog's warehouse (hadoop: when the table is <ns>.<table>)")
    p.add_argument(
        "--window",
        action="append",
        default=[],
        help="a time window to predict planning for, e.g. 1d, or full (repeatable; default 1d, 7d, 30d); "
        "partitions no window opens are reported apart and do not decide the verdict",
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
    p.add_argument(
        "--measure-plans",
        type=int,
        metavar="N",
        help="per window, time at least N plans of its count query on the table after warm-up rounds, "
        "more while the verdict is undecided; the advice rests on their median (default 5; 0 measures "
        "nothing, and the calibration's absolute figures stand in, marked so)",
    )
    p.add_argument(
        "--measure-budget",
        metavar="SECONDS",
        help="seconds those plans may take per table state (default 60; 'none': no limit): a window "
        "whose plans would pass it is measured by one cold plan, and the windows after it are not",
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        help="write the report as JSON to PATH too ('-': to standard output, instead of the text report)",
    )
    p.add_argument("--apply", action="store_true", help="run the advised statements, then check again")
    p.add_argument(
        "--copy",
        action="store_true",
        help="run the advised statements on the scratch copy instead, and report on the copy",
    )
    p.add_argument(
        "--no-copy",
        action="store_true",
        help="make no scratch copy: the planning after a rewrite is predicted, not measured",
    )
    p.add_argument(
        "--keep-copy",
        action="store_true",
        help="leave the scratch copy under <results>/doctor-copies (it is removed otherwise)",
    )
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


def _budget(text: str) -> float | None:
    """`--measure-budget`: seconds, or None for 'none' (no limit)."""
    if text.strip().lower() == "none":
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if seconds <= 0:
        raise UserError(f"bad --measure-budget '{text}': give seconds above 0, e.g. 60, or 'none'")
    return seconds


@functools.lru_cache(maxsize=8)
def _composed(overrides: tuple[str, ...]) -> DictConfig:
    """conf/ composed with `overrides` (checked first: one line for a bad override, as run.py
    gives), once per process. A check and a composition cost about 180 ms of CPU, and a doctor
    run over many tables (or a caller that runs the doctor many times) gives the same overrides
    for each. A bad override raises each time (lru_cache keeps only returns). Callers get a copy."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir

    check_overrides(list(overrides))
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return hydra_compose(config_name="config", overrides=list(overrides))


def compose(args: argparse.Namespace, table: str) -> DictConfig:
    """One table's run config: conf/ with experiment=doctor and the `--set` overrides, then the options."""
    cfg = copy.deepcopy(_composed(("experiment=doctor", *args.set)))
    values = {
        "table": table,
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
        "experiment.scratch_copy": False if args.no_copy else None,
        "experiment.keep_copy": args.keep_copy,
        "experiment.measure_plans": args.measure_plans,
        "experiment.json": args.json,
    }
    if args.window:
        values["experiment.windows"] = args.window
    if args.results:
        values["paths.results_dir"] = args.results
    for key, value in values.items():
        if value is not None or key in ("experiment.uri", "experiment.warehouse"):
            OmegaConf.update(cfg, key, value, merge=False)
    if args.measure_budget is not None:  # 'none' sets null: no limit
        OmegaConf.update(cfg, "experiment.measure_budget_s", _budget(args.measure_budget), merge=False)
    return cfg


@dataclass(frozen=True)
class Checked:
    """One table's outcome in a run over several."""

    table: str
    verdict: str
    exit_code: int
    seconds: float
    session: str | None  # the Spark application it was checked in


def check(args: argparse.Namespace, table: str) -> Checked:
    """Check one table in this process's Spark session; bad input and a broken table are one line
    on stderr and an outcome, not an exception, so the next table is still checked."""
    from pyspark.sql import SparkSession

    from icelab.experiments import doctor

    t0 = time.perf_counter()
    try:
        outcome = doctor.run(compose(args, table))
        verdict, code = outcome.diagnosis.last.advice.verdict, outcome.exit_code
        if outcome.diagnosis.lost_race_line:  # the report is written; the loss is one line too
            print(f"icelab: {outcome.diagnosis.lost_race_line}", file=sys.stderr)
    except BrokenTable as exc:
        print(f"icelab: {exc}", file=sys.stderr)
        verdict, code = "broken", EXIT_BROKEN
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        verdict, code = "bad input", EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 (one table's failure never loses the others' reports)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        logging.getLogger(__name__).debug("doctor on %s", table, exc_info=True)
        print(f"icelab: cannot check {table}: {type(exc).__name__}: {first}", file=sys.stderr)
        verdict, code = "not checked", EXIT_BROKEN
    active = SparkSession.getActiveSession()
    session = active.sparkContext.applicationId if active is not None else None
    return Checked(table, verdict, code, time.perf_counter() - t0, session)


def tables_of(args: argparse.Namespace) -> list[str]:
    """The tables named, then every table of each `--namespace` (listed through its catalog)."""
    tables = list(args.table)
    if args.namespace:
        from icelab.bench.context import open_context
        from icelab.core.config import engine_config
        from icelab.health.source import namespace_tables

        cfg = compose(args, f"{args.namespace[0]}.*")
        spark = open_context(cfg, data=False).spark
        for ns in args.namespace:
            tables += namespace_tables(spark, engine_config(cfg), ns, args.catalog, args.uri, args.warehouse)
    return tables


def summary(rows: list[Checked]) -> str:
    """The closing table of a run over several tables."""
    width = max(len("table"), *(len(r.table) for r in rows))
    sessions = sorted({r.session for r in rows if r.session})
    where = f"one Spark session ({sessions[0]})" if len(sessions) == 1 else f"{len(sessions)} Spark sessions"
    lines = [
        f"summary: {len(rows)} tables in {where}; the first one's seconds include starting it",
        f"  {'table':<{width}}  {'verdict':<15}  exit  seconds",
        *(f"  {r.table:<{width}}  {r.verdict:<15}  {r.exit_code:>4}  {r.seconds:>7.1f}" for r in rows),
        f"exit {max(r.exit_code for r in rows)} (the worst table's)",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Check each table; 0 healthy, 1 an action is advised, 2 bad input, 3 broken (one line on
    stderr), 4 `--apply` made some window's planning worse, 5 `--apply` lost a commit race (one
    line on stderr); the worst of them for several tables."""
    cli = parser()
    args = cli.parse_args(argv)
    if not args.table and not args.namespace:
        cli.error("give a table, or --namespace")
    if args.no_copy and (args.copy or args.keep_copy):
        print("icelab: error: --no-copy makes no copy: drop --copy and --keep-copy", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json and args.json != "-" and not Path(args.json).resolve().parent.is_dir():
        print(f"icelab: error: --json {args.json}: no such directory to write it in", file=sys.stderr)
        return EXIT_BAD_INPUT
    from pyspark.sql import SparkSession

    ours = SparkSession.getActiveSession() is None
    try:
        try:
            tables = tables_of(args)
        except UserError as exc:
            print(f"icelab: error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        rows = [check(args, table) for table in tables]
    finally:
        active = SparkSession.getActiveSession()
        if ours and active is not None:  # a session this command started (not a caller's)
            active.stop()
    if len(rows) > 1:
        # With --json -, standard output is the reports' JSON alone.
        print(summary(rows), file=sys.stderr if args.json == "-" else sys.stdout)
    return max(r.exit_code for r in rows)


if __name__ == "__main__":
    sys.exit(main())
