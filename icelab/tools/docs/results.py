"""docs/results.md's generated blocks: what `icelab compare` can flag, and the stored run
comparisons of results/reference/comparisons/ (their CSVs are the result; the runs are not kept),
counted by `icelab.analysis.stored_comparisons` and rendered by templates/results/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import stored_comparisons
from icelab.tools import compare
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import default_protocol, reference_run

COMPARISONS = "comparisons"
# The run whose repetitions say what a comparison of today's reference runs can reach.
EXPERIMENT = "canonical"


def comparisons(results: Path) -> stored_comparisons.Comparisons:
    """Every comparison table stored under `<results>/reference/comparisons/`."""
    return stored_comparisons.stored_comparisons(results / "reference" / COMPARISONS)


def compare_limits(results: Path) -> str:
    """When a cell can be flagged: compare()'s defaults, the exact test's smallest p for the
    canonical reference run's repetitions, and the smallest p the stored comparisons reached."""
    protocol = reference_run(results, EXPERIMENT).meta()["protocol"]
    now = default_protocol(EXPERIMENT)["repetitions"]
    return render(
        "results/compare_limits.md.j2", **stored_comparisons.limits(comparisons(results), protocol, now)
    )


def one_setting(results: Path) -> str:
    """The stored comparisons: same config, the file-status cache, the metadata caches, with the
    file-status cache's first comparison as `icelab compare` prints it."""
    c = comparisons(results)
    output = compare.report(c.table(stored_comparisons.FILE_CACHE[0]), stored_comparisons.ALPHA)
    return render("results/comparisons.md.j2", **stored_comparisons.one_setting(c), output=output)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "results-compare-limits": compare_limits,
    "results-comparisons": one_setting,
}
