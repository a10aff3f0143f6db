"""A table described by its size: the manifest layouts it could have, what a window reads in
each, and the planning the cost model predicts for them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from icelab.analysis.planning_cells import (
    ENTRY_BYTES,
    ICEBERG,
    PARQUET,
    SMALL_MANIFESTS,
    with_busiest,
)
from icelab.analysis.planning_model import Fit, predict_by_regime
from icelab.core.config import parse_size, window_length

AS_INGESTED = "as_ingested"
MANIFESTS_AS_INGESTED = 379  # 1M entries as ingested in the metadata spike (DESIGN.md)
TARGETS = ("1MB", "2MB", "4MB", "8MB", "16MB", "32MB", "64MB", "128MB")


def measured_entry_bytes(states: pd.DataFrame | None) -> tuple[float, str]:
    """Bytes per manifest entry, from a fitted run's states.csv when it records them (else the
    default ENTRY_BYTES), and where the figure came from."""
    if states is not None and "entry_bytes" in states.columns:
        # As ingested first: its manifests are large, so their fixed overhead (header, schema) hardly
        # adds to the bytes per entry; small rewritten manifests inflate it.
        iceberg = states[states["format"] == ICEBERG]
        for rows, what in ((iceberg[iceberg["profile"] == AS_INGESTED], "as ingested"), (iceberg, "all")):
            found = rows["entry_bytes"].dropna()
            if not found.empty:
                return float(found.median()), f"median of the fitted run's states.csv, {what}"
    return ENTRY_BYTES, "default"


@dataclass(frozen=True)
class Layout:
    """The manifests of a table of `files` entries over `days` daily partitions."""

    name: str  # as_ingested, rewrite_8mb, ...
    files: int
    days: int
    manifests: int
    entries_per_manifest: float
    target_bytes: int | None = None  # None: as ingested
    spans_every_day: bool = False

    @property
    def files_per_day(self) -> float:
        return self.files / self.days

    @property
    def manifests_per_day(self) -> float:
        """Manifests that hold a given day's entries: all of them as ingested; after a rewrite,
        files per day over entries per manifest (below 1: one manifest spans several days)."""
        return (
            float(self.manifests) if self.spans_every_day else self.files_per_day / self.entries_per_manifest
        )

    def read(self, window_days: int) -> tuple[int, int]:
        """(manifests, entries) a window of `window_days` whole days reads.

        As ingested every manifest spans every day, so all are read. After a rewrite the entries
        lie sorted by day, `entries_per_manifest` to a manifest: a window covers w x files-per-day
        entries, plus one manifest for the boundary it straddles. That is ceil(w x files per day /
        entries per manifest) + 1 whether a manifest holds less than a day or several days (then
        the same as ceil(w / days per manifest) + 1), never more than all.
        """
        if self.spans_every_day or window_days >= self.days:
            return self.manifests, self.files
        share = window_days * self.files / self.days / self.entries_per_manifest
        manifests = min(self.manifests, math.ceil(share - 1e-9) + 1)  # 1e-9: float noise on exact multiples
        return manifests, int(min(self.files, manifests * self.entries_per_manifest))


def ingested_layout(files: int, days: int, manifests: int = MANIFESTS_AS_INGESTED) -> Layout:
    """As ingested: `manifests` manifests, each with entries of every day (one per commit)."""
    return Layout(AS_INGESTED, files, days, manifests, files / manifests, None, spans_every_day=True)


def rewrite_layout(files: int, days: int, entry_bytes: float, target: int | str) -> Layout:
    """After `rewrite_manifests` with `commit.manifest.target-size-bytes` = target: entries sorted
    by day, cut every floor(target / entry_bytes) entries."""
    target_bytes = parse_size(target) if isinstance(target, str) else int(target)
    per = max(1, math.floor(target_bytes / entry_bytes))
    return Layout(
        f"rewrite_{size_label(target_bytes).lower()}", files, days, math.ceil(files / per), per, target_bytes
    )


def size_label(size: int) -> str:
    """8388608 -> `8MB`, 262144 -> `256KB` (binary units, as parse_size reads them)."""
    for unit, factor in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"


def window_days(name: str, days: int) -> int:
    """The daily partitions a window reads: `1h` reads its day (partitions are daily), `36h` two,
    `7d` seven, `full` or anything longer than the table every day.

    Raises:
        ValueError: for a window name that is not `<n>h`, `<n>d` or `full`.
    """
    length = window_length(name)
    if length is None:
        return days
    return min(days, max(1, math.ceil(length.total_seconds() / 86400)))


def window_share(name: str, days: int) -> float:
    """The share of a table of `days` days a window covers (`1h`: 1/24 of a day): the entries
    whose bounds it matches, for entries that each hold about a day's slice of rows."""
    length = window_length(name)
    if length is None:
        return 1.0
    return min(1.0, length.total_seconds() / 86400 / days)


def predict_table(
    files: int,
    days: int,
    windows: Sequence[str],
    entry_bytes: float,
    model: Fit,
    targets: Iterable[int | str] = TARGETS,
    manifests: int = MANIFESTS_AS_INGESTED,
    parquet: Mapping[str, Fit] | None = None,
    interval: str = "obs",
    threads: int = 1,
    small: Fit | None = None,
) -> pd.DataFrame:
    """Predicted planning of a table of `files` data files over `days` daily partitions for each
    window: Iceberg as ingested (`manifests` manifests) and rewritten at each target size with
    `model` on `threads` planning threads (the busiest one's entries: `cells`), Parquet with each
    fit of `parquet` (partitions = window days, files = days x files per day). With `small` (a
    calibration's fit on many small manifests alone), the windows of that regime
    (`planning_cells.small_manifests`) are predicted by it, as the doctor predicts them
    (`icelab.health.forecast.PlanningModel`).

    One row per (layout, window): format, mode, layout, target_bytes, manifests,
    entries_per_manifest, manifests_per_day, window, window_days, the features read and
    predicted_ms, lo_ms, hi_ms (`interval`), extrapolated (a feature outside the fitted range of
    the fit used), fit (`all`, or `small_manifests` for a window `small` predicted).
    """
    layouts = [ingested_layout(files, days, manifests)]
    layouts += [rewrite_layout(files, days, entry_bytes, t) for t in targets]
    rows = []
    for lay in layouts:
        for name in windows:
            wd = window_days(name, days)
            read, entries = lay.read(wd)
            matched = min(entries, files * window_share(name, days))
            largest = min(entries, lay.entries_per_manifest)
            rows.append(
                {
                    "format": ICEBERG,
                    "mode": model.mode,
                    "layout": lay.name,
                    "target_bytes": lay.target_bytes,
                    "manifests": lay.manifests,
                    "entries_per_manifest": lay.entries_per_manifest,
                    "manifests_per_day": lay.manifests_per_day,
                    "window": name,
                    "window_days": wd,
                    "manifests_read": read,
                    "entries_read": entries,
                    "entries_matched": matched,
                    "largest_manifest_entries": largest,
                    "manifest_bytes_read": entries * entry_bytes,
                }
            )
    table = with_busiest(pd.DataFrame(rows), threads)
    predicted, use = predict_by_regime(model, small, table, interval)
    predicted["fit"] = np.where(use, SMALL_MANIFESTS, "all")
    parts = [table.join(predicted)]
    for mode, listing in (parquet or {}).items():
        wds = [window_days(name, days) for name in windows]
        lists = pd.DataFrame(
            {
                "format": PARQUET,
                "mode": mode,
                "layout": PARQUET,
                "window": list(windows),
                "window_days": wds,
                "partitions_listed": wds,
                "files_listed": [wd * files / days for wd in wds],
            }
        )
        parts.append(lists.join(listing.predict(lists, interval)))
    return pd.concat(parts, ignore_index=True)


def equal_weights(windows: Sequence[str]) -> dict[str, float]:
    """Each window the same share of the queries."""
    return {w: 1 / len(windows) for w in windows}


def recommend(
    table: pd.DataFrame, weights: Mapping[str, float] | None = None, tolerance: float | None = 0.0
) -> dict[str, Any]:
    """The rewrite target whose predicted planning, weighted over the windows by `weights` (the
    share of queries each window takes; default equal), is least; the targets that tie with it;
    and the same figures as ingested.

    Args:
        tolerance: a target whose weighted planning is at most (1 + tolerance) x the best one's
            ties with it (the model cannot tell them apart); None: not judged.

    Raises:
        ValueError: when the table has no rewrite layout.
    """
    iceberg = table[table["format"] == ICEBERG]
    order = list(dict.fromkeys(iceberg["window"]))
    shares = dict(weights) if weights is not None else equal_weights(order)
    sums = iceberg.groupby("layout", sort=False)["predicted_ms"].sum()
    mixed = (
        iceberg.assign(part=iceberg["predicted_ms"] * iceberg["window"].map(shares).fillna(0.0))
        .groupby("layout", sort=False)["part"]
        .sum()
    )
    rewrites = iceberg[iceberg["target_bytes"].notna()]
    if rewrites.empty:
        raise ValueError("no rewrite target to recommend")
    targets = mixed[list(dict.fromkeys(rewrites["layout"]))]
    best = str(targets.idxmin())
    labels = {
        str(r.layout): size_label(int(r.target_bytes))
        for r in rewrites.drop_duplicates("layout").itertuples()
    }
    ties = (
        []
        if tolerance is None
        else [
            labels[k]
            for k, v in targets.sort_values().items()
            if k != best and v <= targets[best] * (1 + tolerance)
        ]
    )
    row = rewrites[rewrites["layout"] == best].iloc[0]
    ingested = iceberg[iceberg["layout"] == AS_INGESTED]
    return {
        "layout": best,
        "target": labels[best],
        "target_bytes": int(row["target_bytes"]),
        "manifests": int(row["manifests"]),
        "entries_per_manifest": float(row["entries_per_manifest"]),
        "summed_ms": float(sums[best]),
        "weighted_ms": float(targets[best]),
        "weights": {w: shares.get(w, 0.0) for w in order},
        "tolerance": tolerance,
        "ties": ties,
        "per_target": {labels[k]: float(v) for k, v in targets.items()},
        "as_ingested_ms": float(sums[AS_INGESTED]) if not ingested.empty else None,
        "as_ingested_weighted_ms": float(mixed[AS_INGESTED]) if not ingested.empty else None,
        "as_ingested_manifests": int(ingested["manifests"].iloc[0]) if not ingested.empty else None,
        "windows": order,
        "extrapolated": bool(
            iceberg.loc[iceberg["layout"] == best].get("extrapolated", pd.Series(False)).any()
        ),
    }


def outside_range(table: pd.DataFrame, files: int, model: Fit) -> str | None:
    """What of a predicted table lies beyond the states `model` was fitted on: its data files, or
    the entries per manifest of a layout (against the largest manifest any fitted cell read);
    None when nothing does."""
    fitted = model.cells
    low, high = float(fitted["data_files"].min()), float(fitted["data_files"].max())
    found = []
    if not low <= files <= high:
        found.append(f"{files:,} data files (fitted {low:,.0f} to {high:,.0f})")
    largest = fitted["largest_manifest_entries"].dropna()
    if not largest.empty:
        lo, hi = float(largest.min()), float(largest.max())
        layouts = table[(table["format"] == ICEBERG)].drop_duplicates("layout")
        beyond = layouts[(layouts["entries_per_manifest"] < lo) | (layouts["entries_per_manifest"] > hi)]
        if not beyond.empty:
            names = ", ".join(f"{r.layout} {r.entries_per_manifest:,.0f}" for r in beyond.itertuples())
            found.append(f"entries per manifest of {names} (fitted {lo:,.0f} to {hi:,.0f})")
    return "; ".join(found) or None
