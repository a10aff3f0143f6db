"""The generated block of docs/advice-quality.md: every blind check of the cost model, one row
each in the order registered, with its result by its own registered condition.

The result comes from the scorer (`icelab.tools.blind_check.outcome` on `score`, as `icelab
costmodel blind --registration N` prints it first) over each registration's committed runs; what
each check judged, in words, is the template's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import blind_check as criterion
from icelab.analysis.calibration import SHIPPED, Where
from icelab.tools import blind_check
from icelab.tools.docs import decision_check_page
from icelab.tools.docs.blind_check_page import score_of
from icelab.tools.docs.markdown import render


def _calibration(path: Path) -> tuple[str, str]:
    """Where a calibration file was measured (`local/object 20 ms`) and when it was made (UTC, to
    the minute)."""
    data = json.loads(path.read_text())
    made = str(data["provenance"].get("created_utc") or "")[:16]
    return str(Where.of(data["engine"], data["storage"], data["latency_ms"])), made


def row(results: Path, number: int) -> dict[str, Any]:
    """One registration: its page, registering commit and date, what predicted its cells, and
    its registered condition as scored (`blind_check.outcome`)."""
    reg = blind_check.REGISTRATIONS[number]
    scored = score_of(results, number)
    commit = scored["registration"]["commit"]  # "<hash> <ISO date>", None before its commit
    shipped = Path("results") / SHIPPED
    where, made = _calibration(results / reg.calibration.relative_to("results"))
    return {
        "number": number,
        "page": Path(reg.page).name,
        "commit": blind_check.short(commit).split()[0] if commit else None,
        "date": commit.split()[1][:10] if commit else None,
        "ladder": bool(reg.ladder),
        "fresh": reg.fresh_calibration,
        "calibration": reg.calibration.relative_to(shipped).as_posix(),
        "where": where,
        "made": made,
        "outcome": scored["outcome"],
    }


def checks(results: Path) -> str:
    """The table of every registration, in order, and what the criterion's three figures are."""
    return render(
        "advice_quality/checks.md.j2",
        rows=[row(results, n) for n in sorted(blind_check.REGISTRATIONS)],
        decision=decision_check_page.scored(results),
        within=criterion.WITHIN,
        share_within=criterion.SHARE_WITHIN,
        never_beyond=criterion.NEVER_BEYOND,
        bias=criterion.BIAS,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {"advice-quality-checks": checks}
