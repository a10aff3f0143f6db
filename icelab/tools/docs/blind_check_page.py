"""The generated blocks of the blind checks' pages (docs/costmodel-check.md, the first
registration; docs/costmodel-check-2.md, the second; docs/costmodel-check-3.md, the third, on the
store): each registered check as scored today, per
set (icelab's held-out states, tables other engines wrote) on the runs of one commit, with the
criterion's three figures, the interval's coverage.

Figures come from `icelab.tools.blind_check.score` (the command `icelab costmodel blind
--registration N`) over the registration's committed held-out runs and doctor_catalogue runs
(`blind_check.REGISTRATIONS`), predicted with its registered calibration.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from icelab.analysis import blind_check as criterion
from icelab.tools import blind_check
from icelab.tools.docs.markdown import render


def _part(part: dict[str, Any], what: str) -> dict[str, Any] | None:
    """One set's figures for the template; None when no run measured a cell."""
    if not part["runs"]:
        return None
    verdict = part["verdict"]
    return {
        "what": what,
        "commit": (part["commit"] or "unknown")[:7],
        "after_registration": part["after_registration"],
        "runs": part["runs"],
        "left_out": part["left_out"],
        "verdict": verdict,
        "holds": verdict["holds"],
        "by_size": blind_check.sizes_shown(part),
        "doctor": part.get("doctor") if (part.get("doctor") or {}).get("cells") else None,
    }


def _under(results: Path, path: Path) -> Path:
    """A registration's path (under results/) under the results directory `results`."""
    return results / path.relative_to("results")


def score_of(results: Path, number: int) -> dict[str, Any]:
    """The blind check `number` scored (`blind_check.score`) on its runs under `results`.

    Raises:
        LookupError: when its registered calibration is not stored there.
    """
    reg = blind_check.REGISTRATIONS[number]
    if not _under(results, reg.calibration).is_file():
        raise LookupError(f"no calibration {reg.calibration.name} under {results / 'reference'}")
    return blind_check.score(
        _under(results, reg.runs),
        _under(results, reg.foreign),
        _under(results, reg.calibration),
        reg=reg,
    )


def result(results: Path, number: int = 1) -> str:
    """The blind check `number` scored on the committed runs, as `icelab costmodel blind
    --registration <number>` prints it; before any held-out run, says so."""
    reg = blind_check.REGISTRATIONS[number]
    scored = score_of(results, number)
    parts = [
        _part(scored["states"], f"icelab's held-out states ({reg.held_out} runs)"),
        _part(scored["foreign"], "tables other engines wrote (doctor_catalogue runs)"),
    ]
    if "reported" in scored:
        parts.append(_part(scored["reported"], blind_check.REPORTED))
    return render(
        "blind_check/result.md.j2",
        number=number,
        registration=scored["registration"],
        calibration=reg.calibration.as_posix(),
        runs_dir=reg.runs.as_posix(),
        parts=[p for p in parts if p],
        within=criterion.WITHIN,
        share_within=criterion.SHARE_WITHIN,
        never_beyond=criterion.NEVER_BEYOND,
        bias=criterion.BIAS,
        min_runs=criterion.MIN_RUNS,
        min_sittings=criterion.MIN_SITTINGS,
        doctor_calibrated=reg.doctor_calibrated,
        fresh_calibration=reg.fresh_calibration,
    )


BLOCKS = {
    "costmodel-blind-check": result,
    "costmodel-blind-check-2": functools.partial(result, number=2),
    "costmodel-blind-check-3": functools.partial(result, number=3),
    "costmodel-blind-check-4": functools.partial(result, number=4),
    "costmodel-blind-check-5": functools.partial(result, number=5),
}
