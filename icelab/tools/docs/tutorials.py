"""The generated blocks of the two tutorials (docs/tutorial-doctor.md, docs/tutorial-figure10.md),
and docs/history.md's list of the newest fresh runs of the Figure 10 tutorial.

The doctor tutorial quotes what the doctor said on the `fragmented` shape of the newest
`doctor_catalogue` run of the scratch-copy reference set (`results/reference/doctor-scratch`): a
table plain Spark SQL wrote, checked with its "after" measured on a scratch copy, in one call.
The Figure 10 tutorial quotes how long the `manifest_8mb` reference run took, and what its
default run did on a fresh data directory (the `effect` reference set: dataset build included).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import shape_catalogue
from icelab.core.runs import Run, find_runs
from icelab.experiments.planning import effect_text, judge_effect
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import commit_state, minutes_between, provenance, reference_run, run_minutes

# The catalogue's shape the tutorial follows: appends over every day, one manifest per append.
SHAPE = "fragmented"
# The reference set of the catalogue runs whose doctor measures its "after" on a scratch copy.
SCRATCH_SET = "doctor-scratch"


def tutorial_shape(results: Path) -> tuple[dict[str, Any], str]:
    """The tutorial's shape from the newest doctor_catalogue reference run, and that run's provenance.

    Raises:
        LookupError: when the run has no such shape.
    """
    run = reference_run(results, "doctor_catalogue", SCRATCH_SET)
    for shape in shape_catalogue.catalogue(run)["shapes"]:
        if shape["shape"] == SHAPE:
            return shape, provenance(run)
    raise LookupError(f"doctor_catalogue run {run.run_id} has no shape '{SHAPE}'")


def doctor_check(results: Path) -> str:
    """What `icelab doctor` said before any change: verdict, exit code, why, planning per window."""
    shape, source = tutorial_shape(results)
    return render("tutorials/doctor_check.md.j2", shape=shape, provenance=source)


def doctor_copy(results: Path) -> str:
    """What the rewrite on a copy did: manifests and planning per window, before and after."""
    shape, source = tutorial_shape(results)
    if not shape["applied"]:
        raise LookupError(f"shape '{SHAPE}' of the doctor_catalogue run was not rewritten on a copy")
    return render("tutorials/doctor_copy.md.j2", shape=shape, provenance=source)


def figure10_time(results: Path) -> str:
    """How long the manifest_8mb reference run took, and on what."""
    run = reference_run(results, "manifest_8mb")
    return render(
        "tutorials/figure10_time.md.j2",
        minutes=run_minutes(run),
        dataset=(run.config().get("dataset") or {}).get("name", "?"),
        rows=run.meta().get("rows"),
        cores=run.env()["machine"]["cores"],
        memory=run.env()["machine"]["memory_gib"],
        provenance=provenance(run),
    )


# The reference set of `python run.py experiment=manifest_8mb` at its default size, run on a data
# directory without the dataset: the build is in its time.
FRESH_SET = "effect"


def fresh_run(run: Run) -> dict[str, Any]:
    """A run on a fresh data directory: its dataset, minutes to the first measurement (session,
    dataset build and verification, table profiles) and measuring, and its summary's effect.

    Raises:
        LookupError: when the run recorded no process start, or its dataset was not built by it.
    """
    if not built_its_dataset(run):
        raise LookupError(f"manifest_8mb run {run.run_id} did not build its dataset")
    meta, env = run.meta(), run.env()
    dataset = run.config()["dataset"]
    effect = judge_effect(pd.read_csv(run.path / "summary.csv"), tuple(meta["ratio"]))
    return {
        "run": run.run_id,
        "commit": commit_state(run),
        "dataset": f"{env['dataset']['name']}-{env['dataset']['hash']}",
        "name": env["dataset"]["name"],
        "rows": int(dataset["rows"] * dataset.get("scale", 1)),
        "setup": minutes_between(meta["process_started_utc"], meta["started_utc"]),
        "measuring": minutes_between(meta["started_utc"], meta["finished_utc"]),
        "total": run_minutes(run),
        "effect": effect,
        "effect_line": effect_text(effect) if effect else None,
    }


def figure10_fresh(results: Path) -> str:
    """What the default manifest_8mb run did on a fresh data directory: how long it took before its
    first measurement and measuring, and its console's `the study's effect:` line.

    Raises:
        LookupError: when the run recorded no process start, or its dataset was not built by it.
    """
    run = reference_run(results, "manifest_8mb", FRESH_SET)
    fresh, env = fresh_run(run), run.env()
    return render(
        "tutorials/figure10_fresh.md.j2",
        dataset=fresh["name"],
        setup=fresh["setup"],
        measuring=fresh["measuring"],
        total=fresh["total"],
        effect=fresh["effect_line"],
        cores=env["machine"]["cores"],
        memory=env["machine"]["memory_gib"],
        provenance=provenance(run),
    )


def built_its_dataset(run: Run) -> bool:
    """Whether the run built its dataset after its process started (a fresh data directory)."""
    meta = run.meta()
    started = meta.get("process_started_utc")
    return bool(started) and run.env()["dataset"]["created_utc"] >= started


# The fresh runs docs/history.md lists: the newest, the sitting that chose the effect dataset's size.
FRESH_LISTED = 4


def fresh_runs(results: Path) -> str:
    """The newest stored default manifest_8mb runs on a fresh data directory, oldest first: dataset,
    rows, minutes to the first measurement and measuring, and the effect's verdict.

    Raises:
        LookupError: when the set holds no such run.
    """
    runs = sorted(
        (
            r
            for r in find_runs(results / "reference" / FRESH_SET)
            if r.experiment == "manifest_8mb" and r.complete and built_its_dataset(r)
        ),
        key=lambda r: r.run_id,
    )
    if not runs:
        raise LookupError(f"no fresh manifest_8mb run under {results / 'reference' / FRESH_SET}")
    rows = [fresh_run(run) for run in runs[-FRESH_LISTED:]]
    return render("tutorials/fresh_runs.md.j2", runs=rows, stored=len(runs), fresh_set=FRESH_SET)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "tutorial-doctor-check": doctor_check,
    "tutorial-doctor-copy": doctor_copy,
    "tutorial-figure10-time": figure10_time,
    "tutorial-figure10-fresh": figure10_fresh,
    "planning-fresh-runs": fresh_runs,
}
