"""`icelab decision-check`: score the doctor's pre-registered decision check
(docs/decision-check.md) on the newest stored `decision_check` run.

    icelab decision-check                                   # results/reference/decision_check
    icelab decision-check --runs results/runs --json -      # another place; JSON on stdout

Exit status: 0 whatever the result (a result is reported, not enforced), 2 for bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from icelab.analysis.decision_check import RATIO_SHARE, RATIO_TOLERANCE, score
from icelab.core.errors import OneLineParser, UserError
from icelab.core.runs import find_runs
from icelab.core.units import pct

RUNS = Path("results") / "reference"


def newest(base: Path):  # noqa: ANN201
    """The newest complete decision_check run under `base`.

    Raises:
        UserError: when there is none.
    """
    runs = [r for r in find_runs(base) if r.experiment == "decision_check" and r.complete]
    if not runs:
        raise UserError(
            f"no complete decision_check run under {base}: run `python run.py experiment=decision_check`"
        )
    return max(runs, key=lambda r: r.run_id)


def text(found: dict) -> str:
    """The score as the console shows it."""
    lines = [
        f"decision check, run {found['run']}: {'PASSES' if found['passes'] else 'does not pass'}",
        f"{'shape':<26} {'window':>6} {'manifests':>11} {'before ms':>9} {'after ms':>8} "
        f"{'ratio pred':>10} {'meas':>6} {'error':>7}",
    ]
    for r in found["windows"]:
        lines.append(
            f"{r['shape']:<26} {r['window']:>6} {r['before_manifests']:>5} -> {r['after_manifests']:<3} "
            f"{r['before_ms']:>9.1f} {r['after_ms']:>8.1f} {r['ratio_predicted'] or 0:>10.2f} "
            f"{r['ratio_measured']:>6.2f} {pct(r['ratio_error']):>7}"
        )
    share = found["ratio_share"]
    lines += [
        f"ratio: {pct(share)} of {found['judged_windows']} windows within {RATIO_TOLERANCE:.0%} "
        f"(at least {RATIO_SHARE:.0%}): {'holds' if found['parts']['ratio'] else 'fails'}",
        f"advised rewrites measured faster beyond noise, none worse: "
        f"{'holds' if found['parts']['advised'] else 'fails: ' + ', '.join(found['advised_failing'])}",
        f"no healthy shape whose rewrite is more than 10% faster: "
        f"{'holds' if found['parts']['healthy'] else 'fails: ' + ', '.join(found['healthy_failing'])}",
    ]
    for s in found["shapes"]:
        most = "-" if s["most_faster"] is None else pct(s["most_faster"])
        lines.append(f"  {s['shape']:<26} {s['verdict']:<15} fastest window {most:>6}: {s['why'][:90]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Score the newest decision_check run and print it (or its JSON)."""
    p = OneLineParser(prog="icelab decision-check", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=RUNS, help=f"where the runs are (default {RUNS})")
    p.add_argument("--json", metavar="PATH", help="write the score as JSON ('-': standard output)")
    args = p.parse_args(argv)
    try:
        found = score(newest(args.runs))
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(found, indent=1, default=str))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1, default=str))
    print(text(found))
    return 0
