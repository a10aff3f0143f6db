"""The generated blocks of the decision checks (docs/decision-check.md, registration 6;
docs/decision-check-7.md, registration 7), each scored on its newest stored run, and the doctor
catalogue's measured savings beside their fresh-process re-measure (docs/history.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import decision_check, remeasured
from icelab.core.runs import Run, find_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def newest(results: Path, experiment: str = "decision_check") -> Run | None:
    """The newest complete run of `experiment` under results/reference, if any."""
    runs = [r for r in find_runs(results / "reference") if r.experiment == experiment and r.complete]
    return max(runs, key=lambda r: r.run_id) if runs else None


def scored(results: Path) -> dict[str, Any] | None:
    """The newest run's score (`decision_check.score`), or None before any run is stored."""
    run = newest(results)
    return decision_check.score(run) if run is not None else None


def result(results: Path, experiment: str = "decision_check", scorer: Any = decision_check) -> str:
    """A registration (6; 7: `decision_check_7`, scored by `remeasured`) scored on its newest run:
    per shape, then each part of its criterion and the verdict; before any run, says so."""
    run = newest(results, experiment)
    found, where = (scorer.score(run), provenance(run)) if run else (None, None)
    return render(f"decision_check/{experiment}.md.j2", found=found, provenance=where, c=scorer)


def catalogue_savings(results: Path) -> str:
    """The newest scratch-copy doctor_catalogue run: per shape, the doctor's measured savings beside
    the fresh-process re-measure's."""
    run = reference_run(results, "doctor_catalogue", "doctor-scratch")
    shapes, windows = remeasured.joined(run)
    errors = [s for s in shapes if s["error"]]
    return render(
        "decision_check/remeasured.md.j2",
        windows=windows,
        errors=errors,
        provenance=provenance(run),
        c=remeasured,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "decision-check-result": result,
    "decision-check-7-result": functools.partial(result, experiment="decision_check_7", scorer=remeasured),
    "doctor-remeasured": catalogue_savings,
}
