"""`icelab decision-check`: score the doctor's pre-registered decision check
(docs/decision-check.md; registration 7: docs/decision-check-7.md) on the newest stored run of it.

    icelab decision-check                                   # results/reference/decision_check
    icelab decision-check --registration 7                  # results/reference/decision_check_7
    icelab decision-check --runs results/runs --json -      # another place; JSON on stdout

Exit status: 0 whatever the result (a result is reported, not enforced), 2 for bad input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from icelab.analysis import remeasured
from icelab.analysis.decision_check import RATIO_SHARE, RATIO_TOLERANCE, score
from icelab.core.errors import OneLineParser, UserError
from icelab.core.runs import find_runs
from icelab.core.units import pct

RUNS = Path("results") / "reference"


EXPERIMENTS = {6: "decision_check", 7: "decision_check_7"}


def newest(base: Path, experiment: str = "decision_check"):  # noqa: ANN201
    """The newest complete run of `experiment` under `base`.

    Raises:
        UserError: when there is none.
    """
    runs = [r for r in find_runs(base) if r.experiment == experiment and r.complete]
    if not runs:
        raise UserError(
            f"no complete {experiment} run under {base}: run `python run.py experiment={experiment}`"
        )
    return max(runs, key=lambda r: r.run_id)


def _shape_lines(shapes: list[dict]) -> list[str]:
    """A line per scored shape: its verdict, its fastest window after the rewrite, and why."""
    lines = []
    for s in shapes:
        most = "-" if s["most_faster"] is None else pct(s["most_faster"])
        lines.append(f"  {s['shape']:<26} {s['verdict']:<15} fastest window {most:>6}: {s['why'][:90]}")
    return lines


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
    return "\n".join([*lines, *_shape_lines(found["shapes"])])


def text_7(found: dict) -> str:
    """Registration 7's score as the console shows it."""
    lines = [
        f"decision check 7, run {found['run']}: {'PASSES' if found['passes'] else 'does not pass'}",
        f"{'shape':<26} {'window':>6} {'doctor saving ms':>16} {'re-measured ms':>14} {'within':>6}",
    ]
    for w in found["windows"]:
        mine = "-" if w["doctor_saving_ms"] is None else f"{w['doctor_saving_ms']:.1f}"
        within = "-" if w["within"] is None else ("yes" if w["within"] else "no")
        lines.append(f"{w['shape']:<26} {w['window']:>6} {mine:>16} {w['saving_ms']:>14.1f} {within:>6}")
    share, tolerance = found["saving_share"], remeasured.SAVING_TOLERANCE
    lines += [
        f"savings: {pct(share)} of {found['judged_windows']} windows within {tolerance:.0%} "
        f"(at least {remeasured.SAVING_SHARE:.0%}): {'holds' if found['parts']['saving'] else 'fails'}",
        f"every verdict right by the re-measure: "
        f"{'holds' if found['parts']['verdict'] else 'fails: ' + ', '.join(found['wrong'])}",
    ]
    return "\n".join([*lines, *_shape_lines(found["shapes"])])


def main(argv: Sequence[str] | None = None) -> int:
    """Score the newest decision_check run and print it (or its JSON)."""
    p = OneLineParser(prog="icelab decision-check", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=Path, default=RUNS, help=f"where the runs are (default {RUNS})")
    p.add_argument("--registration", type=int, choices=sorted(EXPERIMENTS), default=6, help="which check (6)")
    p.add_argument("--json", metavar="PATH", help="write the score as JSON ('-': standard output)")
    args = p.parse_args(argv)
    try:
        run = newest(args.runs, EXPERIMENTS[args.registration])
        found = remeasured.score(run) if args.registration == 7 else score(run)
    except (UserError, LookupError) as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(found, indent=1, default=str))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1, default=str))
    print(text_7(found) if args.registration == 7 else text(found))
    return 0
