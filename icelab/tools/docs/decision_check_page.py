"""The generated block of docs/decision-check.md: the doctor's decision check scored on the newest
stored `decision_check` run (`icelab.analysis.decision_check`), or a line saying none is stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import decision_check
from icelab.core.runs import Run, find_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance

PLACE = Path("reference")


def newest(results: Path) -> Run | None:
    """The newest complete decision_check run under results/reference, if any."""
    runs = [r for r in find_runs(results / PLACE) if r.experiment == "decision_check" and r.complete]
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


BLOCKS: dict[str, Callable[[Path], str]] = {"decision-check-result": result}
