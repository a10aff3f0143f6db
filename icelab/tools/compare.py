"""Compare stored runs: per (query, variant, window) and timing, the change of the median and a
Mann-Whitney U test over the measured repetitions, flagging regressions and improvements; and
the ratio of medians with a bootstrap interval, pooled over several sessions per side.

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
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import false_discovery_control, mannwhitneyu

from icelab.analysis import effect_intervals
from icelab.analysis.rows import counted
from icelab.analysis.stored_run import stored
from icelab.core.results import write_csv
from icelab.core.runs import Run, find_run

KEYS = ["query_id", "variant", "window"]
TIMINGS = ["planning_ms", "execution_ms", "total_ms"]
STATS = ["n_a", "n_b", "median_a", "median_b", "change", "p_value", "min_p"]
EFFECT_COLUMNS = ["ratio", "ci_low", "ci_high", "pairs", "recurring", "estimator", "effect"]
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
REGRESSION, IMPROVEMENT, NO_CHANGE = "regression", "improvement", "no change"
TOO_FEW, MISSING = "too few repetitions", "missing"
MOVED = [effect_intervals.SLOWER, effect_intervals.FASTER, effect_intervals.NOT_RECURRING]
# Config keys that name where things went, not what was measured.
IGNORED_CONFIG = ("paths.", "progress", "charts", "hydra.")


def min_p(n: int, m: int) -> float:
    """The smallest two-sided p-value the exact Mann-Whitney U test can give for sizes n and m:
    both tails of the single most extreme ordering, 2 / C(n+m, n)."""
    if n == 0 or m == 0:
        return 1.0
    return min(1.0, 2 / math.comb(n + m, n))


def reps_needed(alpha: float) -> int:
    """The fewest repetitions per side (equal sizes) with which the test can reach p < alpha."""
    n = 1
    while min_p(n, n) >= alpha:
        n += 1
    return n


def _p_value(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    if np.array_equal(np.sort(a), np.sort(b)):
        return 1.0  # identical samples: scipy may return nan when every value ties
    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    return 1.0 if np.isnan(p) else float(p)


def verdict(n_a: int, n_b: int, change: float, p: float, alpha: float, min_change: float) -> str:
    """The label of one comparison."""
    if n_a == 0 or n_b == 0:
        return MISSING
    if min_p(n_a, n_b) >= alpha:
        return TOO_FEW
    if p < alpha and not np.isnan(change) and abs(change) >= min_change:
        return REGRESSION if change > 0 else IMPROVEMENT
    return NO_CHANGE


def adjust(p_values: np.ndarray, correction: str) -> np.ndarray:
    """p-values corrected for testing many cells at once: `bh` (Benjamini-Hochberg, the false
    discovery rate over the cells) or `none`."""
    if correction == "none" or len(p_values) == 0:
        return p_values
    return false_discovery_control(p_values, method="bh")


def _sessions(runs: pd.DataFrame | Sequence[pd.DataFrame]) -> list[dict[tuple, pd.DataFrame]]:
    """The measured rows of each session of one side, grouped by cell."""
    frames = [runs] if isinstance(runs, pd.DataFrame) else list(runs)
    return [dict(tuple(counted(f).groupby(KEYS, sort=False))) for f in frames]


def _values(sessions: list[dict[tuple, pd.DataFrame]], key: tuple, timing: str) -> list[np.ndarray]:
    return [s[key][timing].dropna().to_numpy(float) if key in s else np.array([]) for s in sessions]


def _rounds(
    sessions_a: list[dict[tuple, pd.DataFrame]],
    sessions_b: list[dict[tuple, pd.DataFrame]],
    key: tuple,
    timing: str,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per session, the values of a and b of one cell aligned by repetition (the rounds both ran),
    and whether a was measured first in each of those rounds."""
    out = []
    columns = ["repetition", "measured_utc", timing]
    for sa, sb in zip(sessions_a, sessions_b, strict=True):
        if key not in sa or key not in sb:
            continue
        both = pd.merge(
            sa[key][columns].dropna(), sb[key][columns].dropna(), on="repetition", suffixes=("_a", "_b")
        )
        a_first = pd.to_datetime(both["measured_utc_a"]) < pd.to_datetime(both["measured_utc_b"])
        out.append(
            (both[f"{timing}_a"].to_numpy(float), both[f"{timing}_b"].to_numpy(float), a_first.to_numpy(bool))
        )
    return out


def compare(
    a: pd.DataFrame | Sequence[pd.DataFrame],
    b: pd.DataFrame | Sequence[pd.DataFrame],
    alpha: float = 0.05,
    min_change: float = 0.10,
    correction: str = "bh",
    confidence: float = effect_intervals.CONFIDENCE,
    paired: bool = False,
) -> pd.DataFrame:
    """One row per (query, variant, window, timing): sizes, medians, relative change (b over a,
    positive = slower), p-value, p-value adjusted over every testable cell, and verdict; then
    the ratio of medians with its bootstrap interval and the effect (`icelab.analysis.effect_intervals`).

    `a` and `b` are one run's measurements or several sessions' each: the values are pooled per
    side, and an effect must also recur in every session pair. With `paired`, session i of a and
    of b are the same session (two variants of one run): the effect then comes from the per-round
    ratios, balanced over which variant went first (`effect_intervals.paired_effect`). Dozens of cells are
    tested at once; without a correction, 5% of unchanged cells would be flagged at alpha 0.05 by chance.
    """
    sessions_a, sessions_b = _sessions(a), _sessions(b)
    keys = [k for s in (*sessions_a, *sessions_b) for k in s]
    rows = []
    for key in list(dict.fromkeys(keys)):
        for timing in TIMINGS:
            per_a, per_b = _values(sessions_a, key, timing), _values(sessions_b, key, timing)
            va, vb = np.concatenate(per_a), np.concatenate(per_b)
            if len(va) == 0 and len(vb) == 0:
                continue  # a timing neither run took (execution of planned-only rounds)
            med_a = float(np.median(va)) if len(va) else float("nan")
            med_b = float(np.median(vb)) if len(vb) else float("nan")
            change = (med_b - med_a) / med_a if med_a else float("nan")
            p = _p_value(va, vb)
            if paired:
                effect = effect_intervals.paired_effect(
                    _rounds(sessions_a, sessions_b, key, timing), min_change, confidence
                )
            else:
                effect = effect_intervals.effect(
                    [x for x in per_a if len(x)], [x for x in per_b if len(x)], min_change, confidence
                )
            rows.append(
                {
                    **dict(zip(KEYS, key, strict=True)),
                    "timing": timing,
                    "n_a": len(va),
                    "n_b": len(vb),
                    "median_a": med_a,
                    "median_b": med_b,
                    "change": change,
                    "p_value": p,
                    "min_p": min_p(len(va), len(vb)),
                    **effect,
                }
            )
    table = pd.DataFrame(rows, columns=[*KEYS, "timing", *STATS, *EFFECT_COLUMNS])
    testable = (table["n_a"] > 0) & (table["n_b"] > 0) & (table["min_p"] < alpha)
    table["p_adjusted"] = table["p_value"]
    table.loc[testable, "p_adjusted"] = adjust(table.loc[testable, "p_value"].to_numpy(float), correction)
    table["verdict"] = [
        verdict(r.n_a, r.n_b, r.change, r.p_adjusted, alpha, min_change) for r in table.itertuples()
    ]
    return table


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


def pick(frames: list[pd.DataFrame], variant: str, label: str) -> list[pd.DataFrame]:
    """Each session's rows of one variant, relabelled `label` so that two variants' cells meet.

    Raises:
        LookupError: when a session lacks the variant (the message lists what it has).
    """
    out = []
    for frame in frames:
        rows = frame[frame["variant"] == variant]
        if rows.empty:
            have = ", ".join(dict.fromkeys(frame["variant"]))
            raise LookupError(f"no variant '{variant}' in a compared run (it has: {have})")
        out.append(rows.assign(variant=label))
    return out


def _runs(results: Path, names: str) -> list[Run]:
    """`id1,id2,...`: the sessions of one side."""
    return [find_run(results, name) for name in names.split(",") if name]


def main(argv: list[str] | None = None) -> int:
    """Compare stored runs per query and timing; print the changes, write them as CSV."""
    p = argparse.ArgumentParser(prog="icelab compare", description=main.__doc__)
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
    args = p.parse_args(argv)
    try:
        runs_a, runs_b = _runs(args.results, args.run_a), _runs(args.results, args.run_b)
    except FileNotFoundError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    frames_a = [stored(r).measurements() for r in runs_a]
    frames_b = [stored(r).measurements() for r in runs_b]
    if args.variants:
        label = " -> ".join(args.variants)
        try:
            frames_a = pick(frames_a, args.variants[0], label)
            frames_b = pick(frames_b, args.variants[1], label)
        except LookupError as exc:
            print(f"icelab: error: {exc}", file=sys.stderr)
            return 2
    # Two variants of the same sessions were measured round by round side by side: pair them.
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
    a, b = runs_a[0], runs_b[0]
    names = [",".join(r.run_id for r in runs) for runs in (runs_a, runs_b)]
    print(f"compare: a = {a.experiment}/{names[0]}, b = {b.experiment}/{names[1]}")
    how = "Benjamini-Hochberg adjusted " if args.correction == "bh" else ""
    print(
        f"  flag when the {how}p < {args.alpha} (Mann-Whitney U, two-sided) "
        f"and |change| >= {args.min_change:.0%}"
    )
    pairs = len(effect_intervals.session_pairs(len(runs_a), len(runs_b)))
    estimate = (
        "the per-round ratios b / a (paired; the geometric mean of their medians over the rounds a "
        "went first and those b went first)"
        if paired
        else "median(b) / median(a)"
    )
    print(
        f"  effect when the {args.confidence:.0%} bootstrap interval of {estimate} lies "
        f"wholly beyond 1 +/- {args.min_change:.0%} and every one of {pairs} session pair(s) agrees"
        + (" (one pair: recurrence not tested; give several sessions per side)" if pairs == 1 else "")
    )
    notes = differences(a, b)
    for runs in (runs_a, runs_b):
        notes += [f"sessions of one side differ: {n}" for r in runs[1:] for n in differences(runs[0], r)]
    for note in notes:
        print(f"warning: {note}")
    print(report(table, args.alpha, args.all))
    stem = "_vs_".join(n.replace(",", "+") for n in names)
    out = args.out or Path("results") / "comparisons" / f"{stem}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(out, table)
    print(f"comparison: {out} ({len(table)} rows)")
    if args.forest:
        from icelab.charts.forest import forest_chart

        title = f"{b.experiment}: {names[1]} over {names[0]}"
        for path in forest_chart(
            table, args.timing, args.min_change, title, b.path, args.forest, args.confidence
        ):
            print(f"chart: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
