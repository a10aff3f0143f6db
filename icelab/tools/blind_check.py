"""`icelab costmodel blind`: score the planning cost model's pre-registered blind check
(docs/costmodel-check.md) on the held-out runs stored so far.

    icelab costmodel blind                                  # results/reference/costmodel-check
    icelab costmodel blind --runs results/runs --json -     # other runs; JSON on stdout

It predicts each held-out cell with the registered calibration from the cell's own model inputs
(the run's model_inputs.csv: measure with `experiment.model_inputs=true`), and prints per cell the
measured value (the median of its run medians), the prediction with its 95% interval and the
error, then the criterion's three figures and the interval's coverage, with the commit that
registered them. Cells with fewer than 3 runs or 2 sittings are listed, not scored, and the
check cannot pass while any remains.

Exit status: 0 whatever the result (a result is reported, not enforced), 2 for bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import blind_check, calibration
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE
from icelab.core.errors import UserError
from icelab.core.provenance import REPO
from icelab.core.results import write_json
from icelab.core.runs import find_runs
from icelab.core.units import pct
from icelab.tools.costmodel import OneLineParser

PAGE = "docs/costmodel-check.md"
REGISTERED = Path("results") / calibration.SHIPPED / "local-local-0ms.json"
RUNS = Path("results") / "reference" / "costmodel-check"


ABOUT = "Score the cost model's pre-registered blind check on the held-out runs (exit 2: bad input)."


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = OneLineParser(prog="icelab costmodel blind", description=ABOUT)
    p.add_argument("--runs", type=Path, default=RUNS, help="the held-out runs (default %(default)s)")
    p.add_argument(
        "--calibration",
        type=Path,
        default=REGISTERED,
        help="the calibration to predict with (default: the registered one, %(default)s)",
    )
    p.add_argument(
        "--json", type=Path, help="also write the result as JSON to this file (-: print it instead)"
    )
    return p


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=20, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def registration(path: Path) -> dict[str, Any]:
    """The commit that registered the check, and whether `path` is the calibration it registered
    (byte for byte as committed then)."""
    commit = _git("log", "--diff-filter=A", "--format=%h %cI", "--", PAGE) or None
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    registered = None
    if commit:
        try:
            out = subprocess.run(
                ["git", "show", f"{commit.split()[0]}:{REGISTERED.as_posix()}"],
                cwd=REPO,
                capture_output=True,
                timeout=20,
                check=True,
            )
            registered = hashlib.sha256(out.stdout).hexdigest()
        except (OSError, subprocess.SubprocessError):
            registered = None
    return {
        "commit": commit,
        "calibration": str(path),
        "sha256": sha,
        "as_registered": registered is not None and registered == sha,
    }


def score(runs_dir: Path, calibration_path: Path) -> dict[str, Any]:
    """The scored cells and the verdict, as plain values.

    Raises:
        UserError: for a calibration that cannot be read, or runs that cannot be scored.
    """
    try:
        found = calibration.read(calibration_path)
        model = calibration.iceberg_fit(found, ICEBERG_DEFAULT_MODE)
    except (ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    runs = [r for r in find_runs(runs_dir) if r.complete]
    base = {"registration": registration(calibration_path), "runs": [r.run_id for r in runs]}
    if not runs:
        return base | {"cells": [], "verdict": None}
    try:
        scored = blind_check.predicted(blind_check.measured(runs), model)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    verdict = blind_check.verdict(scored)
    return base | {
        "cells": json.loads(scored.to_json(orient="records")),
        "verdict": verdict.as_json(),
    }


def _figure(value: float, digits: int = 1) -> str:
    return "-" if value != value else pct(value, digits)  # NaN: no complete cell


def text(result: dict[str, Any], runs_dir: Path) -> str:
    """The console view."""
    reg = result["registration"]
    lines = [
        f"blind check registered by {reg['commit'] or 'an unknown commit (no git)'} ({PAGE}); predicted with "
        f"{reg['calibration']}"
        + ("" if reg["as_registered"] else " -- NOT the registered calibration: not the registered check"),
    ]
    if not result["runs"]:
        return "\n".join([*lines, f"no complete held-out run under {runs_dir}: no cell measured yet"])
    cells = pd.DataFrame(result["cells"])
    view = cells.assign(
        measured=cells["planning_ms"].map(lambda v: f"{v:,.1f}"),
        predicted=[f"{r.predicted_ms:,.1f} [{r.lo_ms:,.1f}, {r.hi_ms:,.1f}]" for r in cells.itertuples()],
        error=cells["rel_error"].map(lambda v: f"{v:+.1%}"),
        scored=cells["complete"].map({True: "yes", False: "no"}),
    )
    columns = ["dataset", "layout", "window", "runs", "sittings", "measured", "predicted", "error", "scored"]
    lines.append(view[columns].to_string(index=False))
    v = result["verdict"]
    holds = v["holds"]
    mark = {True: "holds", False: "fails"}
    lines += [
        f"runs: {len(result['runs'])} ({', '.join(result['runs'])}); cells scored: {v['cells']}, "
        f"not scored (fewer than {blind_check.MIN_RUNS} runs or {blind_check.MIN_SITTINGS} sittings): "
        f"{v['incomplete']}",
        f"1. within {pct(blind_check.WITHIN, 0)}: {_figure(v['share_within'])} of cells "
        f"(needs at least {pct(blind_check.SHARE_WITHIN, 0)}): {mark[holds['share_within']]}",
        f"2. largest error: {_figure(v['max_abs_error'])} "
        f"(needs at most {pct(blind_check.NEVER_BEYOND, 0)}): {mark[holds['none_beyond']]}",
        f"3. median signed error: {_figure(v['median_signed_error'])} (needs within "
        f"{pct(blind_check.BIAS, 0)}): {mark[holds['no_bias']]}",
        f"coverage of the 95% prediction interval: {_figure(v['coverage'])} of the scored cells",
        "result: " + ("PASSES" if v["passed"] else "does not pass"),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Score and print; 0, or 2 after one line on stderr for bad input."""
    try:
        args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        if not args.calibration.is_file():
            raise UserError(f"{args.calibration}: no such calibration file")
        result = score(args.runs, args.calibration)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json is not None and str(args.json) == "-":
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(text(result, args.runs))
    if args.json is not None:
        write_json(args.json, result)
        print(f"wrote {args.json}")
    return 0
