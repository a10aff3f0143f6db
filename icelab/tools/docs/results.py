"""docs/results.md's blocks: when `icelab compare` can flag a cell, and the stored comparisons of
results/reference/comparisons/ (`icelab.analysis.stored_comparisons`, templates/results/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import stored_comparisons
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import default_protocol, reference_run

EXPERIMENT = "canonical"  # its repetitions say what a comparison of today's reference runs can reach


def comparisons(results: Path) -> stored_comparisons.Comparisons:
    return stored_comparisons.stored_comparisons(results / "reference" / "comparisons")


def compare_limits(results: Path) -> str:
    """compare()'s defaults, the exact test's smallest p for the canonical reference run's
    repetitions, and the smallest p the stored comparisons reached."""
    protocol = reference_run(results, EXPERIMENT).meta()["protocol"]
    now = default_protocol(EXPERIMENT)["repetitions"]
    figures = stored_comparisons.limits(comparisons(results), protocol, now)
    return render("results/compare_limits.md.j2", **figures)


def one_setting(results: Path) -> str:
    """The stored comparisons: same config, the file-status cache, the metadata caches."""
    return render("results/comparisons.md.j2", **stored_comparisons.one_setting(comparisons(results)))


BLOCKS: dict[str, Callable[[Path], str]] = {
    "results-compare-limits": compare_limits,
    "results-comparisons": one_setting,
}
