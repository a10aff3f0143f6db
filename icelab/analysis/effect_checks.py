"""Effects checked against known answers: A against A, slowdowns planted on chosen queries and
real settings, each a stored `icelab compare --variants` table, and what each shows.

The tables' directory has a README naming each CSV's run, what was planted in it, a note and the
dataset, one table row per CSV: `| \\`a_vs_a_1.csv\\` | <run id> | - | <note> | small |`,
`| \\`planted_01.csv\\` | <run id> | q03:0.25 | | small |`.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import comparison
from icelab.analysis import effect_intervals as effects

SETTING = "setting_"  # stored comparisons of a real setting against initial: setting_<name>.csv
FLAGS = (effects.SLOWER, effects.FASTER)
ROW = re.compile(
    r"^\| `(?P<stem>\w+)\.csv` \| (?P<run>\d{8}T\d{6}Z-\w+) \| (?P<plant>[^|]*?) \|"
    r"(?: (?P<note>[^|]*?) \|)?(?: (?P<dataset>[^|]*?) \|)?",
    re.M,
)


@dataclass(frozen=True)
class Check:
    """One stored comparison: its table, its run, and the slowdowns planted in it."""

    stem: str
    run: str
    plant: dict[str, float]  # query id prefix -> planted fraction
    table: pd.DataFrame
    note: str = ""  # the README's fourth column: what differs about this session
    dataset: str = ""  # the README's fifth column: the dataset the session ran on


def stored_checks(where: Path) -> list[Check]:
    """Every effect check stored in the directory `where`, in its README's order.

    Raises:
        ValueError: when the README names no CSV, or a named CSV is missing.
    """
    found = []
    for m in ROW.finditer((where / "README.md").read_text()):
        plant = m.group("plant").strip()
        sizes = {} if plant in ("", "-") else {k: float(v) for k, v in (p.split(":") for p in plant.split())}
        path = where / f"{m.group('stem')}.csv"
        if not path.is_file():
            raise ValueError(f"{where / 'README.md'} names {path.name}, which is not stored")
        note, dataset = ((m.group(k) or "").strip() for k in ("note", "dataset"))
        found.append(Check(m.group("stem"), m.group("run"), sizes, pd.read_csv(path), note, dataset))
    if not found:
        raise ValueError(f"{where / 'README.md'}: no table of comparisons")
    return found


def planted(row: pd.Series, plant: dict[str, float]) -> float | None:
    """The fraction planted on this row's query, if any (keys are ids or their qNN prefixes)."""
    for key, size in plant.items():
        if row["query_id"] == key or row["query_id"].split("_", 1)[0] == key:
            return size
    return None


def covers(row: pd.Series, size: float) -> bool:
    return bool(row["ci_low"] <= 1 + size <= row["ci_high"])


def same_config(found: list[Check]) -> list[dict[str, object]]:
    """A against A: per session, its cells and values per side, how many cells it flagged
    (effects, and the test's verdicts), and its widest interval relative to its ratio."""
    rows = []
    for c in found:
        t = c.table
        widest = t.loc[((t["ci_high"] - t["ci_low"]) / t["ratio"]).idxmax()]
        rows.append(
            {
                "stem": c.stem,
                "run": c.run,
                "queries": t["query_id"].nunique(),
                "cells": len(t),
                "values": (t["n_a"].min(), t["n_a"].max()),
                "flagged": int(t["effect"].isin(FLAGS).sum()),
                "not_recurring": int((t["effect"] == effects.NOT_RECURRING).sum()),
                "test_flagged": int(t["verdict"].isin(("regression", "improvement")).sum()),
                "widest": {
                    "query": widest["query_id"].split("_", 1)[0],
                    "timing": widest["timing"],
                    "low": widest["ci_low"],
                    "high": widest["ci_high"],
                },
                "note": c.note,
            }
        )
    return rows


def planted_figures(found: list[Check]) -> dict[str, object]:
    """Per planted query and size: how often the effect was flagged slower and the interval
    covered the planted ratio (`rows`); and every flag on a cell nothing was planted on."""
    rows = []
    keys = sorted({(k, v) for c in found for k, v in c.plant.items()}, key=lambda kv: -kv[1])
    for key, size in keys:
        for timing in ("execution_ms", "total_ms"):
            hits = [
                r
                for c in found
                if c.plant.get(key) == size
                for _, r in c.table.iterrows()
                if r["timing"] == timing and planted(r, c.plant) == size
            ]
            ratios = [r["ratio"] for r in hits]
            rows.append(
                {
                    "query": key,
                    "size": size,
                    "timing": timing,
                    "slower": sum(r["effect"] == effects.SLOWER for r in hits),
                    "covered": sum(covers(r, size) for r in hits),
                    "cells": len(hits),
                    "ratios": (min(ratios, default=float("nan")), max(ratios, default=float("nan"))),
                }
            )
    others = [
        (c.stem, r)
        for c in found
        for _, r in c.table.iterrows()
        if planted(r, c.plant) is None or r["timing"] == "planning_ms"
    ]
    return {
        "rows": rows,
        "others": len(others),
        "flagged": [
            {
                "stem": stem,
                "query": r["query_id"].split("_", 1)[0],
                "timing": r["timing"],
                "effect": r["effect"],
                "ratio": r["ratio"],
            }
            for stem, r in others
            if r["effect"] in FLAGS
        ],
    }


def settings(found: list[Check]) -> list[dict[str, object]]:
    """Real settings against `initial` in one session: per setting and timing, the cells flagged
    each way, the median and range of the per-query ratios, and the flagged cells."""
    rows = []
    for c in found:
        for timing, cells in c.table.groupby("timing", sort=False):
            hits = cells[cells["effect"].isin(FLAGS)]
            ratios = cells["ratio"]
            rows.append(
                {
                    "setting": c.note or c.stem,
                    "timing": timing,
                    "cells": len(cells),
                    "ratio": {"median": ratios.median(), "min": ratios.min(), "max": ratios.max()},
                    "slower": int((cells["effect"] == effects.SLOWER).sum()),
                    "faster": int((cells["effect"] == effects.FASTER).sum()),
                    "flagged": [
                        {
                            "query": r.query_id.split("_", 1)[0],
                            "ratio": r.ratio,
                            "low": r.ci_low,
                            "high": r.ci_high,
                        }
                        for r in hits.itertuples()
                    ],
                }
            )
    return rows


def _datasets(group: list[Check]) -> list[str]:
    return [d for d in dict.fromkeys(c.dataset for c in group) if d]


def effect_figures(found: list[Check]) -> dict[str, object]:
    """A against A, then the planted slowdowns, then the real settings per dataset."""
    real = [c for c in found if c.stem.startswith(SETTING)]
    same = [c for c in found if not c.plant and not c.stem.startswith(SETTING)]
    plants = [c for c in found if c.plant]
    groups = [[c for c in real if c.dataset == d] for d in dict.fromkeys(c.dataset for c in real)]
    return {
        "threshold": threshold(),
        "same": {"sessions": len(same), "datasets": _datasets(same), "rows": same_config(same)},
        "plants": plants
        and {"sessions": len(plants), "datasets": _datasets(plants), **planted_figures(plants)},
        "real": [
            {
                "datasets": _datasets(group),
                "runs": list(dict.fromkeys(c.run for c in group)),
                "rows": settings(group),
            }
            for group in groups
        ],
    }


def threshold() -> float:
    """The threshold: `icelab compare`'s default --min-change, which the README's commands keep."""
    return inspect.signature(comparison.compare).parameters["min_change"].default
