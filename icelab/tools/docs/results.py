"""docs/results.md's generated blocks: what `icelab compare` can flag, and the stored run
comparisons of results/reference/comparisons/ (their CSVs are the result; the runs are not kept).

Session labels (A, A2, B1, ...) and run ids come from that directory's README: its table names
each CSV's pair (`| \\`file.csv\\` | A vs B2 | ...`) and its commands end in `# <label> <run id>`.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.core.units import num, spelled
from icelab.tools import compare
from icelab.tools.docs.markdown import listing
from icelab.tools.docs.sources import default_protocol, reference_run

COMPARISONS = "comparisons"
# The stored comparisons by what they compare (file stems under results/reference/comparisons/).
SAME_CONFIG = ("same_config", "same_config_cached")
FILE_CACHE = ("file_cache", "file_cache_2", "file_cache_3", "file_cache_4")
METADATA_CACHE = "metadata_cache"
FLAGGED = (compare.REGRESSION, compare.IMPROVEMENT)


def change(value: float) -> str:
    """A relative change as `-27%`, `+13%`; below 10% with a decimal, `-0.3%`."""
    return f"{value:+.1%}" if abs(value) < 0.095 else f"{value:+.0%}"


@dataclass(frozen=True)
class Comparisons:
    """The stored comparison tables and the README's pairs and run ids."""

    tables: dict[str, pd.DataFrame]  # by file stem
    pairs: dict[str, tuple[str, str]]  # file stem -> (label a, label b)
    runs: dict[str, str]  # label -> run id

    def table(self, stem: str) -> pd.DataFrame:
        if stem not in self.tables:
            raise FileNotFoundError(f"results/reference/{COMPARISONS}/{stem}.csv is not stored")
        return self.tables[stem]

    def pair(self, stem: str) -> str:
        a, b = self.pairs[stem]
        return f"{a} vs {b}"


def comparisons(results: Path) -> Comparisons:
    """Every stored comparison table, with the pairs and run ids its README names.

    Raises:
        FileNotFoundError: when the directory or its README is missing.
        ValueError: when the README names no pair or no run id.
    """
    where = results / "reference" / COMPARISONS
    readme = (where / "README.md").read_text()
    pairs = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\| `(\w+)\.csv` \| (\w+) vs (\w+) \|", readme, re.M)
    }
    runs = {m.group(1): m.group(2) for m in re.finditer(r"#\s+(\w+)\s+(\d{8}T\d{6}Z-\w+)\s*$", readme, re.M)}
    if not pairs or not runs:
        raise ValueError(f"{where / 'README.md'}: no table of pairs or no '# <label> <run id>' commands")
    tables = {p.stem: pd.read_csv(p) for p in sorted(where.glob("*.csv"))}
    return Comparisons(tables, pairs, runs)


def flagged(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["verdict"].isin(FLAGGED)]


def default_sentence(reps: int, alpha: float) -> str:
    """What today's default canonical repetitions give, when they differ from the reference run's."""
    now = default_protocol("canonical")["repetitions"]
    if now == reps:
        return ""
    best = compare.min_p(now, now)
    return f" (today's default, {now} against {now}, gives at best p = {best:.2g}" + (
        f", which cannot reach {alpha})" if best >= alpha else ")"
    )


def compare_limits(results: Path) -> str:
    """When a cell can be flagged: compare()'s defaults, the exact test's smallest p for the
    canonical reference run's repetitions, and the smallest p the stored comparisons reached."""
    defaults = inspect.signature(compare.compare).parameters
    alpha, min_change = defaults["alpha"].default, defaults["min_change"].default
    protocol = reference_run(results, "canonical").meta()["protocol"]
    reps, executions = protocol["repetitions"], protocol["executions"]
    needed = compare.reps_needed(alpha)
    stored = pd.concat(comparisons(results).tables.values())
    sizes = stored[(stored["n_a"] > 0) & (stored["n_b"] > 0)]
    n_a, n_b = int(sizes["n_a"].mode()[0]), int(sizes["n_b"].mode()[0])
    at_size = sizes[(sizes["n_a"] == n_a) & (sizes["n_b"] == n_b)]
    reached = float(at_size["p_value"].min())
    exact = compare.min_p(n_a, n_b)
    approx = (
        f"With larger samples scipy's `mannwhitneyu` uses the normal approximation instead, whose "
        f"smallest p is larger than that bound: the stored comparisons, {n_a} against {n_b}, reach at "
        f"best p = {reached:.3g}, where 2 / C({n_a + n_b}, {n_a}) is {exact:.2g}. "
        if not math.isclose(reached, exact, rel_tol=1e-6)
        else f"The stored comparisons, {n_a} against {n_b}, reach at best p = {reached:.3g}. "
    )
    return (
        "A case is flagged `regression` or `improvement` only when the adjusted p < `--alpha` "
        f"({alpha} by default) and |change| >= `--min-change` ({min_change:.0%}); otherwise `no "
        "change`. The exact test's smallest two-sided p is 2 / C(n+m, n): "
        f"**{reps} against {reps} repetitions (the canonical reference run's `protocol.repetitions`) "
        f"give at best p = {compare.min_p(reps, reps):.2g}"
        + (f", so they can never reach {alpha}**" if compare.min_p(reps, reps) >= alpha else "**")
        + default_sentence(reps, alpha)
        + "; a case whose sizes cannot reach the alpha is reported as `too few repetitions`, with "
        f"the sizes and the minimum needed ({needed} per side at {alpha}, more once adjusted over many "
        "cells), and its bootstrap interval (`icelab compare`'s effect column) is the figure to read. "
        + approx
        + (
            "Execution is measured in `protocol.executions` rounds only "
            f"({num(executions)} of {num(reps)} in the canonical reference run), so to compare "
            "execution run with as many executions as repetitions.\n"
            if executions < reps
            else f"The canonical reference run executes in all {num(reps)} measured rounds, so its "
            "execution cells have as many values as its planning cells.\n"
        )
    )


def _windows(cells: pd.DataFrame, order: list[str]) -> list[str]:
    return sorted(set(cells["window"]), key=order.index)


def one_setting(results: Path) -> str:
    """The stored comparisons: same config, the file-status cache, the metadata caches."""
    c = comparisons(results)
    every = pd.concat(c.tables.values())
    order = list(dict.fromkeys(every["window"]))
    cells = {len(t) for t in c.tables.values()}
    reps = sorted(set(every["n_a"]) | set(every["n_b"]))
    timings = sorted(set(every["timing"]))
    sessions = sorted({label for pair in c.pairs.values() for label in pair})
    same = [f"{len(flagged(c.table(s)))} of {len(c.table(s))} (`{s}.csv`, {c.pair(s)})" for s in SAME_CONFIG]

    first = FILE_CACHE[0]
    cache = c.table(first)
    hits = flagged(cache)
    parquet_hits = hits[hits["variant"] == "parquet"]
    iceberg_hits = hits[hits["variant"] != "parquet"]
    per_window = [
        f"{w} {' and '.join(change(v) for v in parquet_hits[parquet_hits['window'] == w]['change'])}"
        for w in _windows(parquet_hits, order)
    ]
    untouched = [w for w in order if w not in set(parquet_hits["window"])]
    a, b = c.pairs[first]
    output = compare.report(cache, inspect.signature(compare.compare).parameters["alpha"].default)

    recurring = set.intersection(
        *(
            {(r.query_id, r.window) for r in flagged(c.table(s)).itertuples() if r.variant == "parquet"}
            for s in FILE_CACHE
        )
    )
    recurring_windows = sorted({w for _, w in recurring}, key=order.index)
    ice = {s: flagged(c.table(s))[lambda t: t["variant"] != "parquet"] for s in FILE_CACHE}
    ice_text = ", ".join(f"{len(t)} ({c.pair(s)})" for s, t in ice.items())
    ice_all = pd.concat(ice.values())
    base = sorted({c.pairs[s][0] for s in FILE_CACHE if len(ice[s]) == max(len(t) for t in ice.values())})
    drift = [
        (s, c.table(s)[c.table(s)["variant"] != "parquet"]["change"].median())
        for s, (x, y) in c.pairs.items()
        if x in base and y != x and s in c.tables
    ]
    meta = c.table(METADATA_CACHE)
    meta_ice = meta[meta["variant"] != "parquet"]["change"]

    return (
        f"**One setting changed, measured** (`results/reference/comparisons/`, with the commands and "
        f"run ids in its README). {spelled(len(sessions)).capitalize()} sessions of the planning "
        f"experiment at `small` ({', '.join(sessions)}), timing {', '.join(f'`{t}`' for t in timings)} "
        f"only, {'/'.join(map(str, reps))} measured repetitions per side and "
        f"{'/'.join(map(str, sorted(cells)))} cells per comparison (the runs are not kept; their "
        f"comparison tables are). Same config in two sessions: {' and '.join(same)} cells flagged. "
        "Spark's Parquet file-status cache switched on "
        "(`++engine.conf.spark.sql.hive.filesourcePartitionFileCacheSize`, one of the traps pinned "
        f"off), `{first}.csv` ({a} vs {b}): exactly the Parquet cells whose listing it saves are "
        f"flagged ({'; '.join(per_window)}), while {listing(untouched)} "
        + (
            "and every Iceberg cell stay `no change`:"
            if iceberg_hits.empty
            else f"stay `no change`, and {len(iceberg_hits)} Iceberg cells are flagged too:"
        )
        + f"\n\n```\n$ icelab compare {c.runs[a]} {c.runs[b]}\n{output}\n```\n\n"
        f"Across the {spelled(len(FILE_CACHE))} file-cache pairings the same Parquet cells are "
        f"flagged every time ({listing(recurring_windows)}), but so are Iceberg cells, which the "
        f"setting does not touch: {ice_text} (changes {change(ice_all['change'].min())} to "
        f"{change(ice_all['change'].max())}). The most come with "
        f"session {listing(base)} on one side (median change of {listing(base)}'s Iceberg cells "
        "against each other session: "
        + ", ".join(f"{change(m)} {c.pairs[s][1]}" for s, m in drift)
        + "): two single sessions cannot tell a session's drift from an effect. Measure each side "
        "in two sessions and trust the flags that recur. Iceberg's catalog and manifest caches "
        f"(`engine.iceberg_metadata_cache=true`, `{METADATA_CACHE}.csv`, {c.pair(METADATA_CACHE)}) "
        f"flag {len(flagged(meta))} of {len(meta)} cells at `small`, and the medians agree (Iceberg "
        f"cells {change(meta_ice.min())} to {change(meta_ice.max())}, median {change(meta_ice.median())}): "
        "with few small local manifests they do not change planning here (at `medium` this set does "
        "not measure them). Execution-side settings (Iceberg vectorization, nested schema pruning) "
        'are compared interleaved in one session instead, below ("Effects checked against known '
        'answers").\n'
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "results-compare-limits": compare_limits,
    "results-comparisons": one_setting,
}
