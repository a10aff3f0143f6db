"""The stored run comparisons (`icelab compare` tables whose runs are not kept) and what they show:
when a cell can be flagged, and what one setting changed flagged against the same config twice.

Session labels (A, A2, B1, ...) and run ids come from the tables' README: its table names each
CSV's pair (`| \\`file.csv\\` | A vs B2 | ...`) and its commands end in `# <label> <run id>`.
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import comparison

# The stored comparisons by what they compare (file stems).
SAME_CONFIG = ("same_config", "same_config_cached")
FILE_CACHE = ("file_cache", "file_cache_2", "file_cache_3", "file_cache_4")
METADATA_CACHE = "metadata_cache"
FLAGGED = (comparison.REGRESSION, comparison.IMPROVEMENT)
DEFAULTS = inspect.signature(comparison.compare).parameters  # `icelab compare`'s alpha and min_change
ALPHA = DEFAULTS["alpha"].default


@dataclass(frozen=True)
class Comparisons:
    """The stored comparison tables and the README's pairs and run ids."""

    where: Path
    tables: dict[str, pd.DataFrame]  # by file stem
    pairs: dict[str, tuple[str, str]]  # file stem -> (label a, label b)
    runs: dict[str, str]  # label -> run id

    def table(self, stem: str) -> pd.DataFrame:
        if stem not in self.tables:
            raise FileNotFoundError(f"{self.where / stem}.csv is not stored")
        return self.tables[stem]

    def pair(self, stem: str) -> str:
        a, b = self.pairs[stem]
        return f"{a} vs {b}"


def stored_comparisons(where: Path) -> Comparisons:
    """Every comparison table stored in the directory `where`, with the pairs and run ids its
    README names.

    Raises:
        FileNotFoundError: when the directory or its README is missing.
        ValueError: when the README names no pair or no run id.
    """
    readme = (where / "README.md").read_text()
    pairs = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\| `(\w+)\.csv` \| (\w+) vs (\w+) \|", readme, re.M)
    }
    runs = {m.group(1): m.group(2) for m in re.finditer(r"#\s+(\w+)\s+(\d{8}T\d{6}Z-\w+)\s*$", readme, re.M)}
    if not pairs or not runs:
        raise ValueError(f"{where / 'README.md'}: no table of pairs or no '# <label> <run id>' commands")
    tables = {p.stem: pd.read_csv(p) for p in sorted(where.glob("*.csv"))}
    return Comparisons(where, tables, pairs, runs)


def flagged(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["verdict"].isin(FLAGGED)]


def limits(c: Comparisons, protocol: dict, default_reps: int) -> dict[str, object]:
    """When a cell can be flagged: compare()'s defaults, the exact test's smallest p for a run of
    `protocol` (and for today's `default_reps` when it differs), and the smallest p the stored
    comparisons reached."""
    reps = protocol["repetitions"]
    stored = pd.concat(c.tables.values())
    sizes = stored[(stored["n_a"] > 0) & (stored["n_b"] > 0)]
    n_a, n_b = int(sizes["n_a"].mode()[0]), int(sizes["n_b"].mode()[0])
    reached = float(sizes[(sizes["n_a"] == n_a) & (sizes["n_b"] == n_b)]["p_value"].min())
    exact = comparison.min_p(n_a, n_b)
    return {
        "alpha": ALPHA,
        "min_change": DEFAULTS["min_change"].default,
        "reps": reps,
        "best": comparison.min_p(reps, reps),
        "default": None
        if default_reps == reps
        else {"reps": default_reps, "best": comparison.min_p(default_reps, default_reps)},
        "needed": comparison.reps_needed(ALPHA),
        "stored": {
            "n_a": n_a,
            "n_b": n_b,
            "reached": reached,
            "exact": exact,
            "exact_reached": math.isclose(reached, exact, rel_tol=1e-6),
        },
        "executions": protocol["executions"],
    }


def _windows(cells: pd.DataFrame, order: list[str]) -> list[str]:
    return sorted(set(cells["window"]), key=order.index)


def one_setting(c: Comparisons) -> dict[str, object]:
    """The same config twice, the file-status cache, the metadata caches: cells flagged in each,
    and which recur."""
    every = pd.concat(c.tables.values())
    order = list(dict.fromkeys(every["window"]))

    def cells(stem: str) -> dict[str, object]:
        return {
            "stem": stem,
            "pair": c.pair(stem),
            "flagged": len(flagged(c.table(stem))),
            "cells": len(c.table(stem)),
        }

    first = FILE_CACHE[0]
    hits = flagged(c.table(first))
    parquet_hits = hits[hits["variant"] == "parquet"]
    a, b = c.pairs[first]
    recurring = set.intersection(
        *(
            {(r.query_id, r.window) for r in flagged(c.table(s)).itertuples() if r.variant == "parquet"}
            for s in FILE_CACHE
        )
    )
    ice = {s: flagged(c.table(s))[lambda t: t["variant"] != "parquet"] for s in FILE_CACHE}
    ice_all = pd.concat(ice.values())["change"]
    base = sorted({c.pairs[s][0] for s in FILE_CACHE if len(ice[s]) == max(len(t) for t in ice.values())})
    meta = c.table(METADATA_CACHE)
    meta_ice = meta[meta["variant"] != "parquet"]["change"]
    return {
        "sessions": sorted({label for pair in c.pairs.values() for label in pair}),
        "timings": sorted(set(every["timing"])),
        "reps": sorted(set(every["n_a"]) | set(every["n_b"])),
        "cells": sorted({len(t) for t in c.tables.values()}),
        "same": [cells(s) for s in SAME_CONFIG],
        "cache": {
            "stem": first,
            "a": a,
            "b": b,
            "run_a": c.runs[a],
            "run_b": c.runs[b],
            "per_window": [
                {"window": w, "changes": list(parquet_hits[parquet_hits["window"] == w]["change"])}
                for w in _windows(parquet_hits, order)
            ],
            "untouched": [w for w in order if w not in set(parquet_hits["window"])],
            "iceberg": len(hits[hits["variant"] != "parquet"]),
        },
        "file_cache": [{"iceberg": len(t), "pair": c.pair(s)} for s, t in ice.items()],
        "recurring": sorted({w for _, w in recurring}, key=order.index),
        "iceberg_changes": {"min": ice_all.min(), "max": ice_all.max()},
        "base": base,
        "drift": [
            {"change": c.table(s)[c.table(s)["variant"] != "parquet"]["change"].median(), "other": y}
            for s, (x, y) in c.pairs.items()
            if x in base and y != x and s in c.tables
        ],
        "metadata": {
            **cells(METADATA_CACHE),
            "changes": {"min": meta_ice.min(), "max": meta_ice.max(), "median": meta_ice.median()},
        },
    }
