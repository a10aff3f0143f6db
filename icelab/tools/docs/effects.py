"""docs/results.md's block on effects checked against known answers: A against A, and slowdowns
planted on chosen queries, each an `icelab compare --variants` table in results/reference/effects/
(read and counted by `icelab.analysis.effect_checks`, rendered by templates/effects/).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis.effect_checks import Check, effect_figures, stored_checks
from icelab.tools.docs.markdown import render

EFFECTS = "effects"


def checks(results: Path) -> list[Check]:
    """Every stored effect check under `<results>/reference/effects/`, in its README's order.

    Raises:
        ValueError: when the README names no CSV, or a named CSV is missing.
    """
    return stored_checks(results / "reference" / EFFECTS)


def effect_checks(results: Path) -> str:
    """The block: A against A, then the planted slowdowns, then the real settings per dataset."""
    return render("effects/checks.md.j2", **effect_figures(checks(results)))


BLOCKS: dict[str, Callable[[Path], str]] = {"results-effects": effect_checks}
