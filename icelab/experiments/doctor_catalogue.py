"""Task `doctor_catalogue`: the doctor on a catalogue of table shapes other writers made
(`python run.py experiment=doctor_catalogue`).

Every shape is built in a scratch warehouse by plain Spark SQL (`icelab.datagen.spark_sql_shapes`) or by
pyiceberg (`icelab.datagen.pyiceberg_shapes`), checked by the doctor (a dry run), and where it
advises a rewrite, the advice is applied to a copy and the copy checked again. Each shape
declares the verdict, exit code and action it expects; the run fails if any differs, or if an
apply left a window reading more manifests than before. Result: catalogue.json (one row per
shape; with `experiment.measure_plans`, each window's planning measured on the shape as written
beside the cost model's inputs and prediction) in results/runs/doctor_catalogue/<run_id>/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig
from pyspark.sql import SparkSession

from icelab.analysis.calibration import Where
from icelab.analysis.shape_catalogue import CALIBRATION
from icelab.bench.context import open_context
from icelab.core import run_state, storage
from icelab.core.config import EngineConfig, catalogue_config, manifest_health_rules
from icelab.core.errors import UserError
from icelab.core.provenance import REPO
from icelab.core.results import write_json
from icelab.core.session import register_iceberg_catalog
from icelab.datagen import pyiceberg_shapes, spark_sql_shapes
from icelab.health.broken import EXIT_BROKEN, BrokenTable
from icelab.health.check import Policy
from icelab.health.diagnosis import EXIT_ACTION, EXIT_HEALTHY, Diagnosis, diagnose
from icelab.health.forecast import PlanningModel, doctor_model, window_reads
from icelab.health.gain import PREDICTED
from icelab.health.remeasure import job
from icelab.health.scratch import DIRECTORY, traces, tree
from icelab.health.source import resolve

CATALOG = "catalogue"
REWRITE = "rewrite_manifests"
REMEASURED = "remeasure.json"  # in the run directory: `remeasured`


@dataclass(frozen=True)
class Scratch:
    """Where the shapes are built: a Spark session with a Hadoop catalog on `warehouse`."""

    spark: SparkSession
    warehouse: Path
    tiny: bool

    def sized(self, full: int | str, tiny: int | str) -> int | str:
        """The full size, or the tests' tiny one."""
        return tiny if self.tiny else full


@dataclass(frozen=True)
class Shape:
    """One table shape, how it is written, and what the doctor should say of it."""

    name: str
    writer: str  # spark-sql | pyiceberg
    build: Callable[[Scratch, str], Path | str]  # (scratch, name) -> table directory or metadata.json
    verdict: str | None  # None: judged by measurement (the decision check), not expected
    exit_code: int | None
    action: str | None  # what --apply runs ("+"-joined), or "none"
    about: str


def _built(builder: Callable[..., Any], by_spark: bool, sizes: dict[str, tuple[int, int]]) -> Callable:
    """A shape builder called with its sizes (full, tiny) chosen by the scratch: a Spark SQL one
    of `icelab.datagen.spark_sql_shapes` in CATALOG, else a pyiceberg one under `<warehouse>/pyiceberg`."""

    def build(s: Scratch, name: str) -> Path | str:
        where = (s.spark, CATALOG, s.warehouse) if by_spark else (s.warehouse / "pyiceberg",)
        found = builder(*where, name, **{k: s.sized(*v) for k, v in sizes.items()})
        return found[0] if isinstance(found, tuple) else found  # (directory, file removed): broken

    return build


HEALTHY = ("healthy", 0, "none")
REWRITE_ADVISED = ("rewrite needed", 1, REWRITE)
REWRITE_LOWER = ("rewrite advised", 1, REWRITE)  # the rules' lower level
BROKEN = ("broken", EXIT_BROKEN, "none")

# Each shape with what the doctor should say of it, from a catalogue file beside this module:
# doctor_catalogue.yaml, or another named by `experiment.shapes` (foreign_sized.yaml: the fourth
# blind check's tables, docs/costmodel-check-4.md).
CATALOGUES = Path(__file__).parent
CATALOGUE = CATALOGUES / "doctor_catalogue.yaml"
# "judged": no verdict expected; the decision check judges it by what the rewrite measures.
EXPECTED = {
    "healthy": HEALTHY,
    "rewrite": REWRITE_ADVISED,
    "advised": REWRITE_LOWER,
    "broken": BROKEN,
    "judged": (None, None, None),
}
WRITERS = {"spark-sql": spark_sql_shapes, "pyiceberg": pyiceberg_shapes}


def _shape(name: str, writer: str, builder: str, expect: str, about: str, sizes: dict | None = None) -> Shape:
    """A catalogue entry as a Shape: its builder is the function of that name in its writer's module."""
    # Sizes are counts; a builder's other arguments (a spec, a unit, a flag, None) are kept as given.
    sized = {k: tuple(int(x) if type(x) in (int, float) else x for x in v) for k, v in (sizes or {}).items()}
    build = _built(getattr(WRITERS[writer], builder), writer == "spark-sql", sized)
    return Shape(name, writer, build, *EXPECTED[expect], about)


def shapes_of(name: str) -> list[Shape]:
    """The shapes of the catalogue file `<name>.yaml` beside this module.

    Raises:
        UserError: for a name with no such file.
    """
    path = CATALOGUES / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CATALOGUES.glob("*.yaml")))
        raise UserError(f"experiment.shapes={name}: no such shape catalogue (known: {known})")
    return [_shape(**entry) for entry in yaml.safe_load(path.read_text())]


SHAPES: list[Shape] = shapes_of(CATALOGUE.stem)


def _reads(windows: list[dict[str, Any]]) -> dict[str, int]:
    """Manifests (data and delete) each window's planning opens."""
    return {w["window"]: int(w["manifests"]) + int(w.get("delete_manifests") or 0) for w in windows}


def _action(d: Diagnosis) -> str:
    """What `--apply` would run on the table as first read."""
    return "+".join(d.first.advice.actions) or "none"


def _now(windows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per window of the table as written: the cost model's inputs read from its metadata, the
    doctor's predicted planning, and the planning measured on it (None when not measured)."""
    return [
        {
            "window": w["window"],
            **window_reads(w),
            "delete_manifests": int(w.get("delete_manifests") or 0),
            "predicted_ms": (w.get("predicted") or {}).get("ms"),
            "measured_ms": w.get("measured_ms"),
            "measured_plans": w.get("measured_plans", 0),
            "manifests_scanned": w.get("manifests_scanned"),
        }
        for w in windows
    ]


def _fixed(plan: dict[str, Any]) -> dict[str, Any] | None:
    """A measured fixed plan's median, interval and plans; None where it was not measured."""
    if plan.get("measured_ms") is None:
        return None
    return {k: plan.get(k) for k in ("measured_ms", "measured_range_ms", "measured_plans")}


def check_shape(
    scratch: Scratch,
    engine: EngineConfig,
    shape: Shape,
    policy: Policy,
    model: PlanningModel | None,
    measure_plans: int = 0,
    measure_warmups: int = 2,
    scratch_dir: Path | None = None,
) -> dict[str, Any]:
    """Build one shape, check it (timing at least `measure_plans` plans of each window after
    `measure_warmups` untimed rounds), and rewrite a scratch copy of it to the layout meant,
    advised or not, planned again beside the table as written (under `scratch_dir`, else beside the
    warehouse); its row, with every trace the doctor left in the warehouse (`traces`: none expected)."""
    t0 = time.perf_counter()
    table = str(shape.build(scratch, shape.name))
    row: dict[str, Any] = {
        "shape": shape.name,
        "writer": shape.writer,
        "about": shape.about,
        "expected": {"verdict": shape.verdict, "exit_code": shape.exit_code, "action": shape.action},
        "build_s": round(time.perf_counter() - t0, 2),
        "review": [],
        "before": {},
        "after": {},
        "planning": [],
        "apply_s": None,
        "applied": False,
        "worse": False,
    }
    t0 = time.perf_counter()
    copies = scratch_dir or scratch.warehouse.with_name(f"{scratch.warehouse.name}-scratch")
    # The whole warehouse: the shape's table, the other shapes', and the catalog (its directories).
    seen = tree(scratch.warehouse)
    try:
        # The advice runs on a scratch copy, its rewrite to the layout meant included, and the
        # table as written and the copy are planned in the same rounds (`diagnosis._measure_pair`).
        done = diagnose(
            scratch.spark,
            engine,
            resolve(table),
            policy,
            model,
            copy=True,
            scratch_dir=copies,
            measure_plans=measure_plans,
            measure_warmups=measure_warmups,
        )
    except BrokenTable as exc:
        return (
            row
            | {"verdict": "broken", "exit_code": EXIT_BROKEN, "action": "none", "why": str(exc)}
            | {"traces": traces(seen, tree(scratch.warehouse))[:20]}
            | {"check_s": round(time.perf_counter() - t0, 2)}
        )
    first = done.first
    ran = done.applied if done.copy else []  # the statements run on its scratch copy
    row["remeasure_job"] = job(
        shape.name, table, first.health.windows, ran, (done.scratch_info or {}).get("table")
    )
    row |= {
        "traces": traces(seen, tree(scratch.warehouse))[:20],
        "check_s": round(time.perf_counter() - t0, 2),
        "verdict": first.advice.verdict,
        "basis": first.advice.basis,
        "exit_code": EXIT_ACTION if first.advice.actions else EXIT_HEALTHY,
        "action": _action(done),
        "why": first.advice.why,
        "review": [s.action for s in first.advice.statements if not s.applies],
        "before": _reads(first.health.windows),
        "now": _now(first.health.windows),
    }
    if any(a["action"] == REWRITE for a in done.applied):
        row |= {
            "apply_s": row["check_s"],
            "applied": True,
            "after": _reads(done.last.health.windows),
            "planning": done.before_after(),
            "after_verdict": done.last.advice.verdict,
            "after_why": done.last.advice.why,
            # The plan of a window past the newest data on the table and on its rewritten copy, in
            # the same rounds: how the fixed part moves with the layout.
            "fixed": {"now": _fixed(first.health.fixed), "after": _fixed(done.last.health.fixed)},
            "scratch": done.scratch_info,
        }
        # A rewrite the doctor declined may plan worse: that is why it declined it.
        advised = REWRITE in first.advice.actions
        row["worse"] = advised and (done.worse or any(row["after"][w] > n for w, n in row["before"].items()))
    return row


def remeasured(run_dir: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every shape's rewrite re-measured in a fresh process (`icelab.health.remeasure`), with the
    run's own config; its output, also stored as remeasure.json in the run directory. A child
    that fails leaves its stderr's last line in `error`."""
    jobs = [r["remeasure_job"] for r in rows if r.get("remeasure_job") and r["remeasure_job"]["windows"]]
    write_json(run_dir / "remeasure-jobs.json", jobs)
    out = run_dir / REMEASURED
    cmd = [sys.executable, "-m", "icelab.health.remeasure", str(run_dir / "config.yaml")]
    done = subprocess.run(
        [*cmd, str(run_dir / "remeasure-jobs.json"), str(out)], capture_output=True, text=True
    )
    if done.returncode != 0 or not out.is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"the re-measure exited {done.returncode}: {last}", "rows": []}
    return json.loads(out.read_text())


def problems(rows: list[dict[str, Any]]) -> list[str]:
    """Every expectation a row missed, and every apply that left a window reading more manifests."""
    found = []
    for r in rows:
        got = {k: r[k] for k in r["expected"]}
        # The expected verdicts are the prediction's; a verdict measured on a copy is judged by an
        # independent re-measure instead (the decision check), not against them.
        predicted = r.get("basis", PREDICTED) == PREDICTED
        if predicted and r["expected"]["verdict"] is not None and got != r["expected"]:
            found.append(f"{r['shape']}: expected {r['expected']}, the doctor gave {got} ({r['why']})")
        if r.get("traces"):
            found.append(f"{r['shape']}: the doctor left traces in the warehouse: {r['traces'][:3]}")
        if r["worse"]:
            found.append(
                f"{r['shape']}: --apply left a window worse: before {r['before']}, after {r['after']}"
            )
        if r["applied"] and REWRITE in r["action"] and r.get("after_verdict") != "healthy":
            found.append(
                f"{r['shape']}: not a fixed point: on its own rewrite the doctor said {r['after_verdict']} "
                f"({r['after_why']})"
            )
    return found


def check_catalogue(
    spark: SparkSession,
    engine: EngineConfig,
    warehouse: Path,
    policy: Policy,
    model: PlanningModel | None,
    tiny: bool,
    shapes_run: tuple[Shape, ...] | list[Shape] = (),
    measure_plans: int = 0,
    measure_warmups: int = 2,
    scratch_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Every shape built under `warehouse` (a Hadoop catalog CATALOG is registered on it) and
    checked, its scratch copies under `scratch_dir` (`check_shape`)."""
    register_iceberg_catalog(spark, CATALOG, storage.to_uri(str(warehouse)), engine)
    scratch = Scratch(spark, warehouse, tiny)
    return [
        check_shape(scratch, engine, s, policy, model, measure_plans, measure_warmups, scratch_dir)
        for s in (shapes_run or SHAPES)
    ]


def table_text(rows: list[dict[str, Any]]) -> str:
    """The catalogue as the console shows it: one line per shape."""
    lines = [f"{'shape':<22} {'writer':<9} {'verdict':<15} exit {'action':<18} reads before -> after"]
    for r in rows:
        change = f"{r['before']} -> {r['after']}" if r["applied"] else str(r["before"])
        head = f"{r['shape']:<22} {r['writer']:<9} {r['verdict']:<15} {r['exit_code']:>4}"
        lines.append(f"{head} {r['action']:<18} {change}")
    return "\n".join(lines)


@run_state.tracked
def run(cfg: DictConfig) -> list[dict[str, Any]]:
    """Build and check the whole catalogue in a scratch warehouse; store catalogue.json.

    Raises:
        RuntimeError: a verdict, exit code or action differs from the expected one, or an apply
            left a window reading more manifests (the run is stored first, marked failed).
    """
    ccfg = catalogue_config(cfg)
    shapes = shapes_of(ccfg.shapes)
    ctx = open_context(cfg, data=False)
    results = Path(ctx.paths.results_dir)
    where = Where.of(ctx.engine.name, cfg.storage.kind, cfg.storage.get("latency_ms"))
    model = doctor_model(where, [results, REPO / "results"])  # the doctor's, as `icelab doctor` takes it
    policy = Policy(rules=manifest_health_rules(), windows=tuple(ccfg.windows))
    run_dir = ctx.new_run(ccfg.name)
    if model is not None and model.calibration is not None:
        # The calibration the doctor predicted with, kept with the run: a later calibration of
        # the same engine and storage replaces the file it was read from.
        shutil.copyfile(model.path, run_dir / CALIBRATION)
    with tempfile.TemporaryDirectory(prefix="doctor-catalogue-") as scratch:
        rows = check_catalogue(
            ctx.spark,
            ctx.engine,
            Path(scratch),
            policy,
            model,
            ccfg.tiny,
            shapes,
            measure_plans=ccfg.measure_plans,
            measure_warmups=ccfg.measure_warmups,
            scratch_dir=results / DIRECTORY,
        )
        # In a fresh process, while the shapes still exist: the check of each measured saving.
        again = remeasured(run_dir, rows) if ccfg.remeasure else None
    found = problems(rows)
    if again is not None and again.get("error"):
        found.append(again["error"])
    write_json(
        run_dir / "catalogue.json",
        {
            "tiny": ccfg.tiny,
            "catalogue": ccfg.shapes,
            "measure_plans": ccfg.measure_plans,
            "measure_warmups": ccfg.measure_warmups if ccfg.measure_plans else 0,
            # Every shape's scratch copy is rewritten to the layout meant, advised or not.
            "force_rewrite": True,
            # The model behind each shape's predicted planning: which calibration or run, its fit.
            "model": model.as_json() if model is not None else None,
            "shapes": rows,
            "remeasured": None if again is None else REMEASURED,
            "problems": found,
        },
    )
    print(table_text(rows))
    print(f"results: {run_dir}")
    if found:
        raise RuntimeError("doctor catalogue: " + "; ".join(found))
    return rows
