"""The generated blocks of the blind checks' pages (docs/costmodel-check.md, -2 to -5): each
registered check as `icelab costmodel blind --registration N` scores it (`blind_check.score`) on its
committed held-out and doctor_catalogue runs, predicted with its registered calibration."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from icelab.analysis import blind_check as criterion
from icelab.tools import blind_check
from icelab.tools.docs.markdown import ENV, render

ENV.filters["short"] = blind_check.short  # a commit as seven hex digits, on every page


def _part(part: dict[str, Any], what: str) -> dict[str, Any] | None:
    """One set's figures for the template; None when no run measured a cell."""
    if not part["runs"]:
        return None
    doctor = part.get("doctor") or {}
    return {
        **part,
        "what": what,
        "commit": blind_check.short(part["commit"] or "unknown"),
        "holds": part["verdict"]["holds"],
        "doctor": doctor if doctor.get("cells") else None,
    }


def score_of(results: Path, number: int) -> dict[str, Any]:
    """The blind check `number` scored (`blind_check.score`) on its runs under `results`.

    Raises:
        LookupError: when its registered calibration is not stored there.
    """
    reg = blind_check.REGISTRATIONS[number]
    under = [results / p.relative_to("results") for p in (reg.runs, reg.foreign, reg.calibration)]
    if not under[2].is_file():
        raise LookupError(f"no calibration {reg.calibration.name} under {results / 'reference'}")
    return blind_check.score(*under, reg=reg)


def result(results: Path, number: int = 1) -> str:
    """The blind check `number` scored on the committed runs; before any held-out run, says so."""
    reg = blind_check.REGISTRATIONS[number]
    scored = score_of(results, number)
    sets = {
        "states": f"icelab's held-out states ({reg.held_out} runs)",
        "foreign": "tables other engines wrote (doctor_catalogue runs)",
        "reported": blind_check.REPORTED,
    }
    parts = [p for k, what in sets.items() if k in scored and (p := _part(scored[k], what))]
    return render("blind_check/result.md.j2", number=number, found=scored, reg=reg, c=criterion, parts=parts)


BLOCKS = {
    f"costmodel-blind-check{'' if n == 1 else f'-{n}'}": functools.partial(result, number=n)
    for n in sorted(blind_check.REGISTRATIONS)
}
