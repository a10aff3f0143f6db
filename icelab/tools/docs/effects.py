"""docs/results.md's block on effects checked against known answers: A against A, and slowdowns
planted on chosen queries, each an `icelab compare --variants` table in results/reference/effects/.

That directory's README names each CSV's run, what was planted in it, a note and the dataset, one
table row per CSV: `| \\`a_vs_a_1.csv\\` | <run id> | - | <note> | small |`,
`| \\`planted_01.csv\\` | <run id> | q03:0.25 | | small |`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from icelab.analysis import comparison
from icelab.analysis import effect_intervals as effects
from icelab.core.units import num
from icelab.tools.docs.markdown import render, table

EFFECTS = "effects"
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


def checks(results: Path) -> list[Check]:
    """Every stored effect check, in the README's order.

    Raises:
        ValueError: when the README names no CSV, or a named CSV is missing.
    """
    where = results / "reference" / EFFECTS
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


def same_config(found: list[Check]) -> str:
    """A against A: how many cells each session flagged (effects, and the test's verdicts)."""
    rows = []
    for c in found:
        t = c.table
        values = f"{num(t['n_a'].min())} to {num(t['n_a'].max())}"
        width = (t["ci_high"] - t["ci_low"]) / t["ratio"]
        widest = t.loc[width.idxmax()]
        rows.append(
            [
                f"`{c.stem}.csv`",
                f"`{c.run}`",
                t["query_id"].nunique(),
                len(t),
                values,
                int(t["effect"].isin(FLAGS).sum()),
                int((t["effect"] == effects.NOT_RECURRING).sum()),
                int(t["verdict"].isin(("regression", "improvement")).sum()),
                f"{widest['query_id'].split('_', 1)[0]} {widest['timing']}: "
                f"{widest['ci_low']:.2f} to {widest['ci_high']:.2f}",
                c.note or "-",
            ]
        )
    return render("effects/same_config.md.j2", rows=rows)


def planted_table(found: list[Check]) -> dict[str, object]:
    """Per planted query and size: how often the effect was flagged slower and the interval
    covered the planted ratio (`table`); and every flag on a cell nothing was planted on."""
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
            ratios = pd.Series([r["ratio"] for r in hits])
            rows.append(
                [
                    f"{key} +{size:.0%}",
                    f"`{timing}`",
                    f"{sum(r['effect'] == effects.SLOWER for r in hits)} of {len(hits)}",
                    f"{sum(covers(r, size) for r in hits)} of {len(hits)}",
                    f"{ratios.min():.3f} to {ratios.max():.3f}",
                ]
            )
    others = [
        (c.stem, r)
        for c in found
        for _, r in c.table.iterrows()
        if planted(r, c.plant) is None or r["timing"] == "planning_ms"
    ]
    header = ["planted", "timing", "flagged slower", "interval covers 1 + planted", "ratio (min to max)"]
    return {
        "table": table(header, rows),
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


def spread(ratios: pd.Series) -> str:
    """`1.02 (0.91 to 1.18)`: the median per-query ratio and its range."""
    return f"{ratios.median():.2f} ({ratios.min():.2f} to {ratios.max():.2f})"


def settings_table(found: list[Check]) -> str:
    """Real settings against `initial` in one session: per setting and timing, the cells flagged
    each way, the spread of the per-query ratios, and the flagged cells with their ratio and
    interval."""
    rows = []
    for c in found:
        for timing, cells in c.table.groupby("timing", sort=False):
            hits = cells[cells["effect"].isin(FLAGS)]
            shown = "; ".join(
                f"{r.query_id.split('_', 1)[0]} {r.ratio:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
                for r in hits.itertuples()
            )
            rows.append(
                [
                    c.note or c.stem,
                    f"`{timing}`",
                    len(cells),
                    spread(cells["ratio"]),
                    int((cells["effect"] == effects.SLOWER).sum()),
                    int((cells["effect"] == effects.FASTER).sum()),
                    shown or "-",
                ]
            )
    return render("effects/settings.md.j2", rows=rows)


def effect_checks(results: Path) -> str:
    """The block: A against A, then the planted slowdowns, then the real settings per dataset."""
    found = checks(results)
    real = [c for c in found if c.stem.startswith(SETTING)]
    same = [c for c in found if not c.plant and not c.stem.startswith(SETTING)]
    plants = [c for c in found if c.plant]

    def datasets(group: list[Check]) -> list[str]:
        return [d for d in dict.fromkeys(c.dataset for c in group) if d]

    groups = [[c for c in real if c.dataset == d] for d in dict.fromkeys(c.dataset for c in real)]
    return render(
        "effects/checks.md.j2",
        threshold=threshold(),
        same={"sessions": len(same), "datasets": datasets(same), "table": same_config(same)},
        plants=plants and {"sessions": len(plants), "datasets": datasets(plants), **planted_table(plants)},
        real=[
            {
                "datasets": datasets(group),
                "runs": list(dict.fromkeys(f"`{c.run}`" for c in group)),
                "table": settings_table(group),
            }
            for group in groups
        ],
    )


def threshold() -> float:
    """The threshold: `icelab compare`'s default --min-change, which the README's commands keep."""
    return inspect.signature(comparison.compare).parameters["min_change"].default


BLOCKS: dict[str, Callable[[Path], str]] = {"results-effects": effect_checks}
