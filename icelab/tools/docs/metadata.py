"""The generated blocks of docs/metadata-scale.md and of docs/costmodel.md (the cost model fitted on
its states), from the reference `metadata_scale` run and the medium runs the model is checked on."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from icelab.analysis import calibration, model_checks, planning_model, planning_runs, scale_states
from icelab.analysis.effect_intervals import MIN_VALUES
from icelab.analysis.model_checks import EXPERIMENT, sitting_check
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE, PARQUET
from icelab.charts.costmodel import ANCHORS
from icelab.core.runs import Run, find_runs
from icelab.tools import costmodel
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run

# What Iceberg wrote for the real medium dataset, the entry size the states must come near.
MEDIUM_RUN = "manifest_8mb"
# The reference set (under results/reference) of the 10M table rewritten at its recommended
# target: a set of its own, so the states' tables keep the run that holds every state.
TARGET_SET = "clustered-10m"
# What a 1-day plan at 10M files should take here, at most (seconds).
DAY_PLAN_BAR_S = 1.0
# The windows the planning block shows (the run's measurements.parquet holds every one).
PLAN_WINDOWS = ("1d", "30d", "180d")
# The lines of `icelab costmodel`'s output that give its advice.
ADVICE = ("recommended:", "weighted planning", "tie:")
CHART = f"../results/reference/charts/{EXPERIMENT}/planning_vs_files.png"


def _run(results: Path) -> Run:
    return reference_run(results, EXPERIMENT)


def _of_run(template: str, figures: Callable[[Run], dict]) -> Callable[[Path], str]:
    """The block of `template`, from `figures` of the reference run and its provenance."""
    return lambda results: render(template, provenance=provenance(_run(results)), **figures(_run(results)))


def states_table(results: Path) -> str:
    """Per state: entries, manifests as ingested, bytes per entry against the real medium
    dataset's, days each as-ingested manifest spans, Parquet placeholders, build time and disk."""
    run, medium = _run(results), reference_run(results, MEDIUM_RUN)
    found = {"medium_run": medium.run_id, "medium": (per := scale_states.medium_entry_bytes(medium))}
    return render(
        "metadata/states.md.j2", provenance=provenance(run), states=scale_states.states(run, per), **found
    )


# Per state: median planning seconds per variant of Iceberg's default mode (and Parquet) and window
# of PLAN_WINDOWS, with the rounds behind each.
planning_tables = _of_run(
    "metadata/planning.md.j2",
    lambda run: {"states": scale_states.planning_grids(run), "shown": PLAN_WINDOWS, "interval_n": MIN_VALUES},
)


def target_block(results: Path) -> str:
    """The 1-day plan of the 10M table at its recommended target (every complete TARGET_SET run,
    newest first) against DAY_PLAN_BAR_S, and the main set's rewritten layouts of that size.

    Raises:
        LookupError: when the TARGET_SET holds no complete run.
    """
    base = results / "reference" / TARGET_SET
    # find_runs lists oldest first (run ids start with a UTC timestamp): newest first here.
    runs = [r for r in reversed(find_runs(base)) if r.complete and r.experiment == EXPERIMENT]
    if not runs:
        raise LookupError(f"no complete {EXPERIMENT} run under {base}")
    plans, main = [p for r in runs for p in scale_states.window_plans(r, "1d")], _run(results)
    if not plans:
        raise LookupError(f"{runs[0].path}: no 1d plan of a rewritten layout")
    before = [
        p for n in sorted({p["data_files"] for p in plans}) for p in scale_states.window_plans(main, "1d", n)
    ]
    state = runs[0].meta()["states"][plans[0]["dataset"]]
    shown = ["--files", str(state["data_files"]), "--days", str(state["days"]), "--windows", "1d"]
    advice = [line for line in _costmodel(shown, main, results).splitlines() if line.startswith(ADVICE)]
    found = {"plans": plans, "before": before, "bar": DAY_PLAN_BAR_S, "set": TARGET_SET, "advice": advice}
    return render("metadata/target.md.j2", args=shown, main_provenance=provenance(main), **found)


def fit_block(results: Path) -> str:
    """Coefficients with 95% intervals of the fit on the states up to 1M files, Iceberg's default
    mode and Parquet's (`python -m icelab.costmodel --holdout` prints every mode's, with VIFs), and
    per layout the error of the held-out 10M state in Iceberg's default mode."""
    held = model_checks.holdout(_run(results), results / "reference")
    out = planning_model.error_summary(held.held_out[held.held_out["mode"] == ICEBERG_DEFAULT_MODE])
    keys = {"parquet": PARQUET, "mode": ICEBERG_DEFAULT_MODE, "held_errors": out.to_dict("records")}
    return render("metadata/fit.md.j2", provenance=provenance(_run(results)), held=held, **keys)


def repeat_block(results: Path) -> str:
    """The same medium cells in separate reference runs: how far their medians lie apart."""
    runs = planning_runs.repeat_runs(results / "reference")
    return render("metadata/repeat.md.j2", runs=runs, spread=model_checks.spread(runs).to_dict("records"))


def sitting_block(results: Path) -> str:
    """The medium real-data runs predicted by a fit on states measured in the same sitting (the
    check without the drift between days that the repeated cells show), per layout beside the
    main fit's errors on the medium runs of other days."""
    fit, refs, held = sitting_check(results)
    days = planning_model.error_summary(model_checks.holdout(_run(results), results / "reference").reference)
    rows = days.merge(planning_model.error_summary(held.reference), "outer", ["format", "mode", "layout"])
    runs, found = model_checks.by_start([fit, *refs]), {"checks": model_checks, "provenance": provenance}
    return render("metadata/sitting.md.j2", runs=runs, held=held, rows=rows.to_dict("records"), **found)


def _costmodel(shown: list[str], run: Run, results: Path) -> str:
    """What `python -m icelab.costmodel <shown>` prints, fitted on `run`."""
    out = io.StringIO()
    # --reference: the held-out runs of this results directory, wherever `icelab docs` runs from.
    args = [*shown, "--results", str(run.path), "--reference", str(results / "reference")]
    costmodel.run(costmodel.parser().parse_args(args), out=out)
    return out.getvalue().replace(str(run.path), f"results/reference/{EXPERIMENT}/{run.run_id}")


def example_block(results: Path) -> str:
    """`python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d` on the reference run:
    its table of layouts and its recommendation (the coefficients are the fit block's)."""
    shown = ["--files", "5e6", "--days", "365", "--windows", "1d,30d"]
    lines = _costmodel(shown, _run(results), results).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("table:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("  ms: "))
    kept = [*lines[start:end], "  ...", *(line for line in lines if line.startswith(ADVICE))]
    return render("metadata/example.md.j2", args=shown, output="\n".join(kept))


def calibrations_block(results: Path) -> str:
    """The committed calibrations (results/reference/calibrations): by which run and commit, on
    what machine, how long each took, and its Iceberg fit's coefficients."""
    found = [(p.name, calibration.read(p)) for p in sorted((results / calibration.SHIPPED).glob("*.json"))]
    found = [(name, c, calibration.iceberg_fit(c, ICEBERG_DEFAULT_MODE)) for name, c in found]
    return render("metadata/calibrations.md.j2", calibrations=found)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "meta-states": states_table,
    # Per state and layout: the manifests a 1-day window reads, from Iceberg's own scan report.
    "meta-counts": _of_run("metadata/counts.md.j2", lambda run: {"rows": scale_states.window_counts(run)}),
    "meta-planning": planning_tables,
    # Distributed and local with caches on, against local: the ratios' range, by entries matched.
    "meta-modes": _of_run(
        "metadata/modes.md.j2",
        lambda run: {"errors": scale_states.errors(run), **scale_states.mode_ratios(run)},
    ),
    # The published anchors beside the nearest measured cells (never tuned to meet them).
    "meta-anchors": _of_run(
        "metadata/anchors.md.j2",
        lambda run: {"rows": scale_states.anchor_cells(run, ANCHORS), "chart": CHART},
    ),
    "meta-target": target_block,
    "costmodel-fit": fit_block,
    "costmodel-repeat": repeat_block,
    "costmodel-sitting": sitting_block,
    "costmodel-example": example_block,
    "costmodel-calibrations": calibrations_block,
}
