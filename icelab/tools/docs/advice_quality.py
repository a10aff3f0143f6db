"""The generated block of docs/advice-quality.md: every blind check of the cost model, one row
each in the order registered, with its result (`blind_check.outcome`, as `icelab costmodel blind
--registration N` prints it first); what each check judged, in words, is the template's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import blind_check as criterion
from icelab.tools import blind_check
from icelab.tools.docs import decision_check_page
from icelab.tools.docs.blind_check_page import score_of
from icelab.tools.docs.markdown import render


def row(results: Path, number: int) -> dict[str, Any]:
    """One registration: its page, registering commit, and its registered condition as scored."""
    scored = score_of(results, number)
    commit = scored["registration"]["commit"]  # "<hash> <ISO date>", None before its commit
    return {
        "number": number,
        "page": Path(blind_check.REGISTRATIONS[number].page).name,
        "commit": commit and blind_check.short(commit)[:18].replace(" ", ", "),
        "outcome": scored["outcome"],
    }


def checks(results: Path) -> str:
    """The table of every registration, in order, and the criterion's three figures."""
    return render(
        "advice_quality/checks.md.j2",
        rows=[row(results, n) for n in sorted(blind_check.REGISTRATIONS)],
        decision=decision_check_page.scored(results),
        c=criterion,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {"advice-quality-checks": checks}
