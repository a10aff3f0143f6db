"""The generated block of docs/costmodel-check.md: the registered blind check as scored today, per
set (icelab's held-out states, tables other engines wrote) on the runs of one commit, with the
criterion's three figures, the interval's coverage, and the errors per shape and layout.

Figures come from `icelab.tools.blind_check.score` (the command `icelab costmodel blind`) over the
committed held-out runs (results/reference/costmodel-check) and doctor_catalogue runs
(results/reference), predicted with the registered calibration.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import blind_check as criterion
from icelab.core.config.values import window_length
from icelab.tools import blind_check
from icelab.tools.docs.markdown import render


def _groups(cells: pd.DataFrame) -> list[dict[str, Any]]:
    """Per table and layout: cells, scored cells, and the errors of the scored ones."""
    rows = []
    for (dataset, layout), group in cells.groupby(["dataset", "layout"], sort=True):
        figures = criterion.verdict(group)  # the criterion on this group's scored cells
        windows = sorted(group["window"], key=lambda w: window_length(w) or pd.Timedelta.max)
        rows.append(
            {
                "dataset": dataset,
                "layout": layout,
                "windows": ", ".join(windows),
                "cells": len(group),
                "scored": figures.cells,
                "runs": int(group["runs"].min()),
                "sittings": int(group["sittings"].min()),
                "measured": (float(group["planning_ms"].min()), float(group["planning_ms"].max())),
                "errors": (float(group["rel_error"].min()), float(group["rel_error"].max())),
                "within": figures.share_within,
                "covered": figures.coverage,
            }
        )
    return rows


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
        "groups": _groups(pd.DataFrame(part["cells"])),
        "verdict": verdict,
        "holds": verdict["holds"],
        "by_size": blind_check.sizes_shown(part),
        "doctor": part.get("doctor") if (part.get("doctor") or {}).get("cells") else None,
    }


def result(results: Path) -> str:
    """The blind check scored on the committed runs, as `icelab costmodel blind` prints it."""
    scored = blind_check.score(
        results / "reference" / "costmodel-check",
        results / "reference",
        results / blind_check.REGISTERED.relative_to("results"),
    )
    parts = [
        _part(scored["states"], "icelab's held-out states (costmodel_check runs)"),
        _part(scored["foreign"], "tables other engines wrote (doctor_catalogue runs)"),
    ]
    if not any(parts):
        raise LookupError(f"no held-out run under {results / 'reference'} measured a cell")
    return render(
        "blind_check/result.md.j2",
        registration=scored["registration"],
        calibration=blind_check.REGISTERED.as_posix(),
        parts=[p for p in parts if p],
        within=criterion.WITHIN,
        share_within=criterion.SHARE_WITHIN,
        never_beyond=criterion.NEVER_BEYOND,
        bias=criterion.BIAS,
        min_runs=criterion.MIN_RUNS,
        min_sittings=criterion.MIN_SITTINGS,
    )


BLOCKS = {"costmodel-blind-check": result}
