"""`icelab compare`: stored runs compared cell by cell (`icelab.analysis.comparison`), printed,
and written as CSV.

icelab compare <run_a>[,<run_a2>...] <run_b>[,<run_b2>...] [--alpha 0.05] [--min-change 0.10]
               [--out FILE] [--forest FILE]

A run is named by its directory or its run id (searched under --results). A change is flagged
only when it is both significant (p < alpha) and large enough (|change| >= min-change). With few
repetitions the exact test cannot reach alpha at all: 3 against 3 gives at best p = 0.1, so such
cases are reported as `too few repetitions`, never silently as `no change`. The effect columns
(`icelab/analysis/effect_intervals.py`) say whether the interval lies wholly beyond the threshold and the
effect recurs in every session pair.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from icelab.analysis import effect_intervals
from icelab.analysis.comparison import (
    IMPROVEMENT,
    KEYS,
    MISSING,
    MOVED,
    NO_CHANGE,
    REGRESSION,
    TIMINGS,
    TOO_FEW,
    compare,
    pick,
    reps_needed,
)
from icelab.analysis.stored_run import stored
from icelab.core.results import write_csv
from icelab.core.runs import Run, find_run

SHOWN = [
    *KEYS,
    "timing",
    "n_a",
    "n_b",
    "median_a",
    "median_b",
    "change",
    "p_value",
    "p_adjusted",
    "verdict",
    "ratio",
    "recurring",
    "effect",
]
# Config keys that name where things went, not what was measured.
IGNORED_CONFIG = ("paths.", "progress", "charts", "hydra.")


def _flatten(tree: object, prefix: str = "") -> dict[str, object]:
    if not isinstance(tree, dict):
        return {prefix.rstrip("."): tree}
    out: dict[str, object] = {}
    for key, value in tree.items():
        out |= _flatten(value, f"{prefix}{key}.")
    return out


def differences(a: Run, b: Run) -> list[str]:
    """What differs between two runs besides the measurements: experiment, dataset, code, config."""
    notes = []
    if a.experiment != b.experiment:
        notes.append(f"experiments differ: {a.experiment} vs {b.experiment}")
    env_a, env_b = a.env(), b.env()
    ds_a, ds_b = (
        "{name}-{hash}".format(**(e.get("dataset") or {"name": "?", "hash": "?"})) for e in (env_a, env_b)
    )
    if ds_a != ds_b:
        notes.append(f"datasets differ: {ds_a} vs {ds_b}")
    git_a, git_b = env_a.get("git") or {}, env_b.get("git") or {}
    if git_a.get("commit") != git_b.get("commit"):
        notes.append(f"git commits differ: {str(git_a.get('commit'))[:7]} vs {str(git_b.get('commit'))[:7]}")
    dirty = [r.run_id for r, g in ((a, git_a), (b, git_b)) if g.get("dirty")]
    if dirty:
        notes.append(f"uncommitted changes when measured: {', '.join(dict.fromkeys(dirty))}")
    cfg_a, cfg_b = _flatten(a.config()), _flatten(b.config())
    keys = sorted(
        k
        for k in set(cfg_a) | set(cfg_b)
        if cfg_a.get(k) != cfg_b.get(k) and not k.startswith(IGNORED_CONFIG)
    )
    if keys:
        shown = "; ".join(f"{k}: {cfg_a.get(k)!r} -> {cfg_b.get(k)!r}" for k in keys[:20])
        more = f" (and {len(keys) - 20} more)" if len(keys) > 20 else ""
        notes.append(f"configs differ in {len(keys)} keys: {shown}{more}")
    return notes


def _interval(r: pd.Series) -> str:
    if np.isnan(r["ci_low"]):
        return f"{r['ratio']:.3f}" if not np.isnan(r["ratio"]) else "-"
    return f"{r['ratio']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def report(table: pd.DataFrame, alpha: float, show_all: bool = False) -> str:
    """The console view: changed rows (or every row), the verdict and effect counts, and the
    repetitions note."""
    lines = []
    # A table stored before the effect columns existed shows the test alone, as it did then.
    has_effects = "effect" in table.columns
    found = table["effect"].value_counts() if has_effects else pd.Series(dtype=int)
    columns = SHOWN if has_effects else SHOWN[: SHOWN.index("verdict") + 1]
    moved = table["effect"].isin(MOVED) if has_effects else False
    shown = table if show_all else table[table["verdict"].isin([REGRESSION, IMPROVEMENT]) | moved]
    if not shown.empty:
        view = shown.assign(
            change=shown["change"].map(lambda c: f"{c:+.1%}"),
            p_value=shown["p_value"].map(lambda p: f"{p:.3g}"),
            p_adjusted=shown["p_adjusted"].map(lambda p: f"{p:.3g}"),
            median_a=shown["median_a"].map(lambda v: f"{v:,.1f}"),
            median_b=shown["median_b"].map(lambda v: f"{v:,.1f}"),
        )
        if has_effects:
            view = view.assign(
                ratio=shown.apply(_interval, axis=1),
                recurring=[f"{r.recurring}/{r.pairs}" for r in shown.itertuples()],
            )
        lines.append(view[columns].to_string(index=False))
    counts = table["verdict"].value_counts()
    order = [REGRESSION, IMPROVEMENT, NO_CHANGE, TOO_FEW, MISSING]
    lines.append("verdicts: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in order))
    if has_effects:
        kinds = [*MOVED, effect_intervals.NO_EFFECT, effect_intervals.TOO_FEW, effect_intervals.MISSING]
        lines.append("effects: " + ", ".join(f"{found.get(v, 0)} {v}" for v in kinds))
    few = table[table["verdict"] == TOO_FEW]
    if not few.empty:
        sizes = few.drop_duplicates(["n_a", "n_b"]).sort_values(["n_a", "n_b"])
        best = ", ".join(f"{r.n_a} vs {r.n_b}: p >= {r.min_p:.3g}" for r in sizes.itertuples())
        lines.append(
            f"note: {len(few)} cases have too few repetitions for the test ever to reach alpha "
            f"{alpha} (smallest two-sided Mann-Whitney p: {best}); they cannot be flagged. "
            f"Measure at least {reps_needed(alpha)} per side (protocol.repetitions; "
            "protocol.executions for execution_ms and total_ms)."
        )
    if found.get(effect_intervals.TOO_FEW, 0):
        lines.append(
            f"note: {found[effect_intervals.TOO_FEW]} cases have fewer than "
            f"{effect_intervals.MIN_VALUES} values on a side (pooled over its sessions): "
            "no interval, no effect."
        )
    return "\n".join(lines)


def _runs(results: Path, names: str) -> list[Run]:
    """`id1,id2,...`: the sessions of one side."""
    return [find_run(results, name) for name in names.split(",") if name]


DESCRIPTION = "Compare stored runs per query and timing; print the changes, write them as CSV."


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = argparse.ArgumentParser(prog="icelab compare", description=DESCRIPTION)
    p.add_argument("run_a", help="the baseline: a run directory or run id; several sessions: a1,a2,...")
    p.add_argument("run_b", help="the candidate: a run directory or run id; several sessions: b1,b2,...")
    p.add_argument("--results", type=Path, default=Path("results"), help="where run ids are looked up")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the test")
    p.add_argument(
        "--min-change", type=float, default=0.10, help="smallest relative change flagged (test and effect)"
    )
    p.add_argument(
        "--correction",
        choices=["bh", "none"],
        default="bh",
        help="multiple-testing correction over the cells (bh: Benjamini-Hochberg false discovery rate)",
    )
    p.add_argument(
        "--confidence",
        type=float,
        default=effect_intervals.CONFIDENCE,
        help="level of the bootstrap intervals",
    )
    p.add_argument("--out", type=Path, help="CSV file (default: results/comparisons/<a>_vs_<b>.csv)")
    p.add_argument("--forest", type=Path, help="also draw the effects as a forest plot (PNG and SVG)")
    p.add_argument("--timing", choices=TIMINGS, default="total_ms", help="the timing the forest plot draws")
    p.add_argument(
        "--variants",
        nargs=2,
        metavar=("A", "B"),
        help="variant A of run_a against variant B of run_b (the same run twice: an A/B in one session)",
    )
    p.add_argument("--all", action="store_true", help="print every row, not only the flagged ones")
    return p


@dataclass
class Comparison:
    """Two sides of sessions compared cell by cell, with what else differs between the runs."""

    runs_a: list[Run]
    runs_b: list[Run]
    table: pd.DataFrame  # `comparison.compare`'s
    paired: bool  # two variants of the same sessions, measured round by round side by side
    notes: list[str]  # differences besides the measurements

    @property
    def names(self) -> list[str]:
        """Each side's run ids, comma-separated."""
        return [",".join(r.run_id for r in runs) for runs in (self.runs_a, self.runs_b)]


def comparison(args: argparse.Namespace) -> Comparison:
    """The comparison the arguments ask for.

    Raises:
        FileNotFoundError: when a named run does not exist.
        LookupError: when a compared run lacks a named variant.
    """
    runs_a, runs_b = _runs(args.results, args.run_a), _runs(args.results, args.run_b)
    frames_a = [stored(r).measurements() for r in runs_a]
    frames_b = [stored(r).measurements() for r in runs_b]
    if args.variants:
        label = " -> ".join(args.variants)
        frames_a = pick(frames_a, args.variants[0], label)
        frames_b = pick(frames_b, args.variants[1], label)
    paired = bool(args.variants) and [r.path for r in runs_a] == [r.path for r in runs_b]
    table = compare(
        frames_a,
        frames_b,
        args.alpha,
        args.min_change,
        args.correction,
        args.confidence,
        paired,
    )
    notes = differences(runs_a[0], runs_b[0])
    for runs in (runs_a, runs_b):
        notes += [f"sessions of one side differ: {n}" for r in runs[1:] for n in differences(runs[0], r)]
    return Comparison(runs_a, runs_b, table, paired, notes)


def text(result: Comparison, args: argparse.Namespace) -> str:
    """The console view: what was compared and how, the warnings, then `report`."""
    a, b = result.runs_a[0], result.runs_b[0]
    names = result.names
    how = "Benjamini-Hochberg adjusted " if args.correction == "bh" else ""
    pairs = len(effect_intervals.session_pairs(len(result.runs_a), len(result.runs_b)))
    estimate = (
        "the per-round ratios b / a (paired; the geometric mean of their medians over the rounds a "
        "went first and those b went first)"
        if result.paired
        else "median(b) / median(a)"
    )
    lines = [
        f"compare: a = {a.experiment}/{names[0]}, b = {b.experiment}/{names[1]}",
        f"  flag when the {how}p < {args.alpha} (Mann-Whitney U, two-sided) "
        f"and |change| >= {args.min_change:.0%}",
        f"  effect when the {args.confidence:.0%} bootstrap interval of {estimate} lies "
        f"wholly beyond 1 +/- {args.min_change:.0%} and every one of {pairs} session pair(s) agrees"
        + (" (one pair: recurrence not tested; give several sessions per side)" if pairs == 1 else ""),
        *(f"warning: {note}" for note in result.notes),
        report(result.table, args.alpha, args.all),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Compare stored runs per query and timing; print the changes, write them as CSV."""
    args = parser().parse_args(argv)
    try:
        result = comparison(args)
    except (FileNotFoundError, LookupError) as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    print(text(result, args))
    names = result.names
    stem = "_vs_".join(n.replace(",", "+") for n in names)
    out = args.out or Path("results") / "comparisons" / f"{stem}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(out, result.table)
    print(f"comparison: {out} ({len(result.table)} rows)")
    if args.forest:
        from icelab.charts.forest import forest_chart

        b = result.runs_b[0]
        title = f"{b.experiment}: {names[1]} over {names[0]}"
        for path in forest_chart(
            result.table, args.timing, args.min_change, title, b.path, args.forest, args.confidence
        ):
            print(f"chart: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
