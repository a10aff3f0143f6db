"""docs/results.md's block on effects checked against known answers: A against A, planted
slowdowns and real settings, each an `icelab compare --variants` table in results/reference/effects/
(counted by `icelab.analysis.effect_checks`, rendered by templates/effects/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis.effect_checks import Check, effect_figures, stored_checks
from icelab.tools.docs.markdown import render


def checks(results: Path) -> list[Check]:
    """Every stored effect check, in its README's order (ValueError: a named CSV is missing)."""
    return stored_checks(results / "reference" / "effects")


def effect_checks(results: Path) -> str:
    return render("effects/checks.md.j2", **effect_figures(checks(results)))


BLOCKS: dict[str, Callable[[Path], str]] = {"results-effects": effect_checks}
