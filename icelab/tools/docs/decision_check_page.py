"""The generated blocks of the decision checks: registration 6 (docs/decision-check.md,
`icelab.analysis.decision_check`) and 7 (docs/decision-check-7.md, `icelab.analysis.remeasured`),
each scored on its newest stored run, or a line saying none is stored; and the doctor catalogue's
measured savings beside their fresh-process re-measure (docs/doctor.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import decision_check, remeasured
from icelab.core.runs import Run, find_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run

PLACE = Path("reference")


def newest(results: Path, experiment: str = "decision_check") -> Run | None:
    """The newest complete run of `experiment` under results/reference, if any."""
    runs = [r for r in find_runs(results / PLACE) if r.experiment == experiment and r.complete]
    return max(runs, key=lambda r: r.run_id) if runs else None


def scored(results: Path) -> dict[str, Any] | None:
    """The newest run's score (`decision_check.score`), or None before any run is stored."""
    run = newest(results)
    return decision_check.score(run) if run is not None else None


def result(results: Path) -> str:
    """The score of the newest complete decision_check run under results/reference."""
    run = newest(results)
    if run is None:
        return render("decision_check/result.md.j2", found=None, provenance=None)
    return render(
        "decision_check/result.md.j2",
        found=decision_check.score(run),
        provenance=provenance(run),
        tolerance=decision_check.RATIO_TOLERANCE,
        share=decision_check.RATIO_SHARE,
        slack=decision_check.HEALTHY_SLACK,
    )


def _savings(run: Run) -> str:
    shapes, windows = remeasured.joined(run)
    return render(
        "decision_check/remeasured.md.j2",
        windows=windows,
        errors=[s for s in shapes if s["error"]],
        provenance=provenance(run),
        tolerance=remeasured.SAVING_TOLERANCE,
        none_worth=remeasured.NO_SAVING,
    )


def result_7(results: Path) -> str:
    """Registration 7 scored on the newest complete decision_check_7 run under results/reference."""
    run = newest(results, "decision_check_7")
    if run is None:
        return render("decision_check/result_7.md.j2", found=None)
    return render(
        "decision_check/result_7.md.j2",
        found=remeasured.score(run),
        table=_savings(run),
        tolerance=remeasured.SAVING_TOLERANCE,
        share=remeasured.SAVING_SHARE,
    )


def catalogue_savings(results: Path) -> str:
    """The newest doctor_catalogue run of the scratch-copy set: per window of every shape, the
    doctor's measured saving beside the fresh-process re-measure."""
    return _savings(reference_run(results, "doctor_catalogue", "doctor-scratch"))


BLOCKS: dict[str, Callable[[Path], str]] = {
    "decision-check-result": result,
    "decision-check-7-result": result_7,
    "doctor-remeasured": catalogue_savings,
}
