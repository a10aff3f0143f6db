"""The generated blocks of docs/doctor.md: the doctor against `manifest_health` at medium, the
time to a report per table size, and the shape catalogue.

Figures come from the `doctor` reference runs and the newest `manifest_health` reference run
(`icelab.analysis.doctor_reports`). Sizes are decimal (an MB is 1,000,000 bytes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import doctor_reports, shape_catalogue
from icelab.core.runs import Run, find_runs
from icelab.health.anchor import RATIO_ERROR
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def doctor_runs(results: Path) -> list[Run]:
    """Every complete doctor reference run, oldest first.

    Raises:
        LookupError: when there is none.
    """
    runs = [r for r in find_runs(results / "reference") if r.experiment == "doctor" and r.complete]
    if not runs:
        raise LookupError(f"no complete doctor run under {results / 'reference'}")
    return sorted(runs, key=lambda r: r.run_id)


def against_health(results: Path) -> str:
    """Per table state of the manifest_health reference run: what the doctor run on it found."""
    health = reference_run(results, "manifest_health")
    rows = doctor_reports.against_health(health, doctor_runs(results))
    if not rows:
        raise LookupError(f"no doctor reference run read a table of manifest_health run {health.run_id}")
    dataset = health.env().get("dataset", {})
    return render(
        "doctor/vs_health.md.j2",
        rows=rows,
        provenance=provenance(health),
        dataset={k: dataset.get(k) for k in ("name", "hash")},
    )


def readers(results: Path) -> str:
    """Time to a report per doctor reference run, smallest table first."""
    runs = doctor_runs(results)
    machine = runs[-1].env().get("machine", {})
    return render(
        "doctor/readers.md.j2",
        rows=doctor_reports.reader_times(runs),
        machine=machine and {k: machine.get(k) for k in ("cpu", "cores", "memory_gib")},
    )


def catalogue(results: Path) -> str:
    """The newest doctor_catalogue reference run: per table shape, the doctor's verdict and action,
    and planning after the action as predicted and as measured on the copy."""
    run = reference_run(results, "doctor_catalogue")
    return render(
        "doctor/catalogue.md.j2",
        rows=shape_catalogue.rows(run),
        provenance=provenance(run),
        tiny=shape_catalogue.catalogue(run)["tiny"],
    )


def judged(results: Path) -> str:
    """The newest doctor_catalogue reference run: per window of each rewrite applied on a copy, the
    after the doctor predicted beside the plans measured before and after, interleaved."""
    run = reference_run(results, "doctor_catalogue")
    rows = shape_catalogue.judged(run)
    if not rows:
        raise LookupError(f"doctor_catalogue run {run.run_id} applied no rewrite with measured plans")
    quantile, count = shape_catalogue.ratio_error(run)
    errors = [r["after_error"] for r in rows if r["after_error"] is not None]
    return render(
        "doctor/judged.md.j2",
        rows=rows,
        provenance=provenance(run),
        quantile=quantile,
        count=count,
        used=RATIO_ERROR,
        within=sum(abs(e) <= 0.25 for e in errors),
        judged=len(errors),
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "doctor-vs-health": against_health,
    "doctor-readers": readers,
    "doctor-catalogue": catalogue,
    "doctor-judged": judged,
}
