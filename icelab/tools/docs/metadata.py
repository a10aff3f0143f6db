"""The generated blocks of docs/metadata-scale.md (the metadata-scale states, planning at each
size, window and mode, the anchors) and of docs/costmodel.md (the planning cost model fitted on
them), all read from the reference `metadata_scale` run (and the medium reference runs the model
is checked on)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from icelab.analysis import calibration, model_checks, planning_model, planning_runs, scale_states
from icelab.analysis.effect_intervals import MIN_VALUES
from icelab.analysis.model_checks import BAR, EXPERIMENT, sitting_check, utc
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE
from icelab.charts.costmodel import ANCHORS
from icelab.core.runs import Run, find_runs
from icelab.tools import costmodel, costmodel_output
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run

# What Iceberg wrote for the real medium dataset, the entry size the states must come near.
MEDIUM_RUN = "manifest_8mb"
# The reference set (under results/reference) of the 10M table rewritten at its recommended
# target: a set of its own, so the states' tables keep the run that holds every state.
TARGET_SET = "clustered-10m"
# What a 1-day plan at 10M files should take here, at most (seconds).
DAY_PLAN_BAR_S = 1.0


def _run(results: Path) -> Run:
    return reference_run(results, EXPERIMENT)


def states_table(results: Path) -> str:
    """Per state and layout: entries, manifests, bytes, bytes per entry against the real medium
    dataset's, days each as-ingested manifest spans, snapshots, build time and disk."""
    run, medium = _run(results), reference_run(results, MEDIUM_RUN)
    per_entry = scale_states.medium_entry_bytes(medium)
    return render(
        "metadata/states.md.j2",
        provenance=provenance(run),
        medium_run=medium.run_id,
        medium=per_entry,
        states=scale_states.states(run, per_entry),
    )


def counts_table(results: Path) -> str:
    """The layouts' deterministic counts: manifests a 1-day window reads, as ingested and at the
    1-to-2-days rewrite of each state, from Iceberg's own scan report."""
    run = _run(results)
    return render("metadata/counts.md.j2", provenance=provenance(run), rows=scale_states.window_counts(run))


def planning_tables(results: Path) -> str:
    """Per state: median planning per variant and window (seconds), with the rounds behind each."""
    run = _run(results)
    states = scale_states.planning_grids(run)
    few = all(s["rounds"][1] < MIN_VALUES for s in states)
    return render(
        "metadata/planning.md.j2", provenance=provenance(run), states=states, interval_n=MIN_VALUES, few=few
    )


def modes_table(results: Path) -> str:
    """Distributed against local planning (and local with Iceberg's caches on), per state, layout
    and window: the ratio of medians, beside what planning read."""
    run = _run(results)
    figures = scale_states.mode_ratios(run)
    return render(
        "metadata/modes.md.j2", provenance=provenance(run), errors=scale_states.errors(run), **figures
    )


def anchors_table(results: Path) -> str:
    """The published anchors beside the nearest measured cells (never tuned to meet them)."""
    run = _run(results)
    chart = f"../results/reference/charts/{EXPERIMENT}/planning_vs_files.png"
    rows = scale_states.anchor_cells(run, ANCHORS)
    return render("metadata/anchors.md.j2", provenance=provenance(run), rows=rows, chart=chart)


def target_block(results: Path) -> str:
    """The 1-day plan of the 10M table at its recommended target (every complete TARGET_SET run,
    newest first) against DAY_PLAN_BAR_S, beside the same plan on the main set's rewritten layouts
    of that size.

    Raises:
        LookupError: when the TARGET_SET holds no complete run.
    """
    base = results / "reference" / TARGET_SET
    # find_runs lists oldest first (run ids start with a UTC timestamp): newest first here.
    runs = [r for r in reversed(find_runs(base)) if r.complete and r.experiment == EXPERIMENT]
    if not runs:
        raise LookupError(f"no complete {EXPERIMENT} run under {base}")
    target, main = runs[0], _run(results)
    plans = [p for r in runs for p in scale_states.window_plans(r, "1d")]
    sizes = sorted({p["data_files"] for p in plans})
    before = [p for files in sizes for p in scale_states.window_plans(main, "1d", files)]
    for plan in plans + before:
        plan["within"] = plan["median_s"] <= DAY_PLAN_BAR_S
    if not plans:
        raise LookupError(f"{target.path}: no 1d plan of a rewritten layout")
    state = target.meta()["states"][plans[0]["dataset"]]
    files, days = state["data_files"], state["days"]
    shown = ["--files", str(files), "--days", str(days), "--windows", "1d"]
    return render(
        "metadata/target.md.j2",
        args=shown,
        advice=_costmodel_lines(shown, main, results, ("recommended:", "weighted planning", "tie:")),
        provenance=provenance(target),
        main_provenance=provenance(main),
        plans=plans,
        before=before,
        bar=DAY_PLAN_BAR_S,
        set=TARGET_SET,
    )


def fit_block(results: Path) -> str:
    """Coefficients with 95% intervals of the fit on the states up to 1M files."""
    run = _run(results)
    held = model_checks.holdout(run, results / "reference")
    report = costmodel_output.coefficient_report(held.fits)
    return render("metadata/fit.md.j2", provenance=provenance(run), limit=held.limit, report=report)


def holdout_block(results: Path) -> str:
    """Predicted against measured: per layout of the held-out 10M state, and per layout the
    errors on the medium real-data runs (manifest_8mb and manifest_sweep: many cells each)."""
    held = model_checks.holdout(_run(results), results / "reference")
    text = costmodel_output.checked_report(held.held_out, "held out (above the fit's limit)")
    # Per layout only: `python -m icelab.costmodel --holdout` prints every cell.
    text = "held out (above the fit's limit), " + text[text.index("absolute relative error per layout:") :]
    summary = planning_model.error_summary(held.reference).to_dict("records")
    return render("metadata/holdout.md.j2", report=text, summary=summary)


def repeat_block(results: Path) -> str:
    """The same medium cells in separate reference runs: how far their medians lie apart, the
    scatter any check of the model against one run carries."""
    runs = planning_runs.repeat_runs(results / "reference")
    return render("metadata/repeat.md.j2", runs=runs, spread=model_checks.spread(runs).to_dict("records"))


def sitting_block(results: Path) -> str:
    """The medium real-data runs predicted by a fit on states measured in the same sitting:
    the check without the drift between days that the repeated cells show."""
    fit, refs, held = sitting_check(results)
    runs = [
        {
            "run": r,
            "provenance": provenance(r),
            "measured_on": model_checks.measured_on(r),
            "aqe": model_checks.aqe(r),
            "start": utc(r, "started_utc"),
            "end": utc(r, "finished_utc"),
        }
        for r in model_checks.by_start([fit, *refs])
    ]
    return render(
        "metadata/sitting.md.j2",
        runs=runs,
        limit=held.limit,
        bar=BAR,
        **model_checks.within(held.reference),
        summary=planning_model.error_summary(held.reference).to_dict("records"),
        spread=model_checks.spread(refs).to_dict("records"),
    )


def _costmodel(shown: list[str], run: Run, results: Path) -> str:
    """What `python -m icelab.costmodel <shown>` prints, fitted on `run`."""
    out = io.StringIO()
    # --reference: the held-out runs of this results directory, wherever `icelab docs` runs from.
    args = [*shown, "--results", str(run.path), "--reference", str(results / "reference")]
    costmodel.run(costmodel.parser().parse_args(args), out=out)
    return out.getvalue().replace(str(run.path), f"results/reference/{EXPERIMENT}/{run.run_id}")


def _costmodel_lines(shown: list[str], run: Run, results: Path, starts: tuple[str, ...]) -> list[str]:
    """The lines of `_costmodel`'s output that begin with one of `starts`."""
    return [line for line in _costmodel(shown, run, results).splitlines() if line.startswith(starts)]


def example_block(results: Path) -> str:
    """`python -m icelab.costmodel --files 5e6 --days 365 --windows 1d,30d` on the reference run,
    its coefficient table left out."""
    shown = ["--files", "5e6", "--days", "365", "--windows", "1d,30d"]
    lines = _costmodel(shown, _run(results), results).rstrip().splitlines()
    # The coefficients are the fit block's: the example keeps its header and what follows them.
    start = next(i for i, line in enumerate(lines) if line.startswith("table:"))
    gap = "  ... (the coefficients and fit statistics: the fit block above)"
    kept = [*lines[:2], gap, "", *lines[start:]]
    return render("metadata/example.md.j2", args=shown, output="\n".join(kept))


def calibrations_block(results: Path) -> str:
    """The committed calibrations (results/reference/calibrations): where each was measured, by
    which run and commit, on what, how long it took, and its Iceberg fit's coefficients."""
    found = []
    for path in sorted((results / calibration.SHIPPED).glob("*.json")):
        c = calibration.read(path)
        model = calibration.iceberg_fit(c, ICEBERG_DEFAULT_MODE)
        machine = c.provenance.get("machine") or {}
        cells = model.cells
        seconds = c.provenance.get("calibrate_s")
        found.append(
            {
                "file": path.name,
                "where": str(c.where),
                "machine": f"{machine.get('cpu')}, {machine.get('cores')} cores",
                "run_id": c.run_id,
                "commit": c.commit,
                "states": c.provenance.get("states") or [],
                "n": model.n,
                "r2": model.r2,
                "minutes": None if seconds is None else seconds / 60,
                "mode": model.mode,
                "threads": c.threads,
                "files_low": cells["data_files"].min(),
                "files_high": cells["data_files"].max(),
                "largest_low": cells["largest_manifest_entries"].min(),
                "largest_high": cells["largest_manifest_entries"].max(),
                "report": costmodel_output.coefficient_report({(model.format, model.mode): model}),
            }
        )
    return render("metadata/calibrations.md.j2", calibrations=found)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "meta-states": states_table,
    "meta-counts": counts_table,
    "meta-planning": planning_tables,
    "meta-modes": modes_table,
    "meta-anchors": anchors_table,
    "meta-target": target_block,
    "costmodel-fit": fit_block,
    "costmodel-holdout": holdout_block,
    "costmodel-repeat": repeat_block,
    "costmodel-sitting": sitting_block,
    "costmodel-example": example_block,
    "costmodel-calibrations": calibrations_block,
}
