"""The generated blocks of the two tutorials (docs/tutorial-doctor.md, docs/tutorial-figure10.md).

The doctor tutorial quotes what the doctor said on the `fragmented` shape of the newest
`doctor_catalogue` reference run: a table plain Spark SQL wrote, checked, then rewritten on a copy.
The Figure 10 tutorial quotes how long the `manifest_8mb` reference run took.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import shape_catalogue
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

# The catalogue's shape the tutorial follows: appends over every day, one manifest per append.
SHAPE = "fragmented"


def tutorial_shape(results: Path) -> tuple[dict[str, Any], str]:
    """The tutorial's shape from the newest doctor_catalogue reference run, and that run's provenance.

    Raises:
        LookupError: when the run has no such shape.
    """
    run = reference_run(results, "doctor_catalogue")
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


BLOCKS: dict[str, Callable[[Path], str]] = {
    "tutorial-doctor-check": doctor_check,
    "tutorial-doctor-copy": doctor_copy,
    "tutorial-figure10-time": figure10_time,
}
