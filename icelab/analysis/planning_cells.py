"""The cells a planning cost model is fitted on: one per (format, mode, dataset, layout, query,
window), the median planning_ms over its measured repetitions and the median of each feature.

Iceberg reads manifests in parallel, one manifest to a thread (the driver's worker pool in local
planning, `iceberg.worker.num-threads`, by default the driver's cores; Spark's task slots in
distributed planning), never one manifest on two threads. So the entries that set the time are
those of the busiest thread: `busiest_thread_entries = max(entries_read / threads, entries of the
largest manifest read)`. A window on many small manifests spreads over every thread; a window that
falls in one large rewritten manifest waits for one thread (a thread dump of the 10M state's 1h
plan, docs/history-metadata-scale.md). `threads` is the driver's cores from the run's env.json.

Reading an entry costs more the more bytes it has (Avro decodes every column's statistics, and a
wide schema carries them for tens of columns): `busiest_thread_kb` is the busiest thread's entries
at the bytes per entry of the manifests the window reads. The calibrated model
(`CALIBRATED_FEATURES`, icelab.analysis.calibration) has both terms, a cost per entry and a cost
per byte, and is fitted on a ladder of wide and narrow entries that tells them apart; on states of
one schema the two are collinear, so the model fitted on icelab's own states keeps entries only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from icelab.analysis.rows import counted
from icelab.core.config import parse_size

ICEBERG, PARQUET = "iceberg", "parquet"
FEATURES: dict[str, tuple[str, ...]] = {
    # Bytes read is left out by default: entries have about constant size, so bytes and entries are
    # nearly collinear and their two coefficients could not be told apart (the VIF shows it).
    # entries_matched (files_scanned): the entries that pass the filter become scan tasks (and, in
    # distributed planning, travel to the driver); a wide window on the same manifests costs more.
    ICEBERG: ("manifests_read", "busiest_thread_entries", "entries_matched"),
    PARQUET: ("partitions_listed", "files_listed"),
}
# The calibrated model's form (the second registration, docs/costmodel-check-2.md).
CALIBRATED_FEATURES: tuple[str, ...] = (
    "manifests_read",
    "busiest_thread_entries",
    "busiest_thread_kb",
    "entries_matched",
)
# The calibrated model's regime of many small manifests (docs/costmodel-check-5.md): a window
# that reads more than one manifest, of at most SMALL_MANIFEST_BYTES each on average, is predicted
# by the same form fitted on the calibration cells of that kind alone. There a manifest costs
# about what opening and scheduling it costs, whatever its bytes; the fit over every cell, pulled
# by single large manifests decoded on one thread, prices that lower (the fourth check's tables,
# of tens of 10 KB manifests, were under-predicted by it). On the ladder the boundary falls
# between 376 KB (meta_200k as ingested) and 700 KB (its 1 MB rewrite): any value between splits
# it alike.
SMALL_MANIFEST_BYTES = 512 * 1024
SMALL_MANIFESTS = "small_manifests"
OPTIONAL_FEATURES = ("manifest_bytes_read",)
# How each coefficient is shown: its unit, and the factor from the fitted ms per one.
UNITS: dict[str, tuple[str, float]] = {
    "const": ("fixed ms", 1.0),
    "manifests_read": ("ms per manifest", 1.0),
    "entries_read": ("ms per 1,000 entries", 1e3),
    "busiest_thread_entries": ("ms per 1,000 entries on the busiest thread", 1e3),
    "busiest_thread_kb": ("ms per MB on the busiest thread", 1e3),
    "entries_matched": ("ms per 1,000 entries matched", 1e3),
    "manifest_bytes_read": ("ms per MB of manifests", 1e6),
    "partitions_listed": ("ms per partition", 1.0),
    "files_listed": ("ms per 1,000 files", 1e3),
}
# Runs that record no planning mode (setup null) planned with Iceberg's default (local, on one
# driver) and Spark's default listing: serial up to the threshold of paths, a Spark job above it
# (spark.sql.sources.parallelPartitionDiscovery.threshold, pinned at 32 in conf/engine/_common.yaml).
ICEBERG_DEFAULT_MODE = "local"
PARQUET_SERIAL, PARQUET_PARALLEL = "listing_serial", "listing_parallel"
PARALLEL_THRESHOLD = 32
ENTRY_BYTES = 700.0  # 673 B metadata-only, about 710 B on real data (DESIGN.md)
CELL_KEYS = ["format", "mode", "dataset", "layout", "query_id", "window"]


def fitted_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a fit may use: measured rounds (no warm-ups) that succeeded and scanned something."""
    rows = counted(frame)
    if "scan_nodes" in rows.columns:
        rows = rows[rows["scan_nodes"].isna() | (rows["scan_nodes"] != 0)]  # 0: answered from metadata
    return rows


def _numeric(frame: pd.DataFrame, column: str) -> pd.Series:
    """A column as numbers (nulls as NaN); all NaN when the frame lacks it."""
    if column not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    return pd.to_numeric(frame[column], errors="coerce").astype(float)


def modes(frame: pd.DataFrame) -> pd.Series:
    """The planning mode of each row: its `setup`, or the default the run planned with when it
    recorded none (module constants ICEBERG_DEFAULT_MODE and PARALLEL_THRESHOLD)."""
    setup = frame["setup"] if "setup" in frame.columns else pd.Series(None, index=frame.index, dtype=object)
    partitions = _numeric(frame, "partitions_scanned")
    listing = np.where(partitions > PARALLEL_THRESHOLD, PARQUET_PARALLEL, PARQUET_SERIAL)
    default = np.where(frame["format"] == PARQUET, listing, ICEBERG_DEFAULT_MODE)
    return setup.where(setup.notna(), pd.Series(default, index=frame.index))


def cells(
    frame: pd.DataFrame, states: pd.DataFrame | None = None, windows: pd.DataFrame | None = None
) -> pd.DataFrame:
    """One row per (format, mode, dataset, layout, query, window): the median planning_ms over the
    measured repetitions (`n` of them) and the median of each feature.

    Iceberg features come from the scan's own metrics (manifests_scanned; entries read =
    files_scanned + files_skipped; entries matched = files_scanned); where a row lacks them, and
    for manifest_bytes_read, from `windows` (windows.csv, computed from the manifest list).
    busiest_thread_entries = max(entries_read / planner_threads, largest_manifest_entries): the
    largest manifest read from `windows` when it records it, else from the layout (`largest_read`).
    Parquet: partitions_listed = partitions_scanned, files_listed = files_scanned. `data_files`
    comes from `states` (states.csv), else from the most entries (Iceberg) or files (Parquet) any
    cell of the dataset read.
    """
    rows = fitted_rows(frame)
    rows = rows.assign(
        mode=modes(rows),
        layout=np.where(rows["format"] == PARQUET, PARQUET, rows["profile"].astype(str)),
        manifests_read=_numeric(rows, "manifests_scanned"),
        entries_read=_numeric(rows, "files_scanned") + _numeric(rows, "files_skipped"),
        entries_matched=_numeric(rows, "files_scanned"),
        partitions_listed=_numeric(rows, "partitions_scanned"),
        files_listed=_numeric(rows, "files_scanned"),
        planner_threads=_numeric(rows, "planner_threads"),
    )
    if rows["planner_threads"].isna().any():
        raise ValueError("rows without planner_threads (the driver's cores): read a run with `measurements`")
    numeric = [
        "planning_ms",
        "window_hours",
        "manifests_read",
        "entries_read",
        "entries_matched",
        "partitions_listed",
        "files_listed",
        "planner_threads",
    ]
    out = rows.groupby(CELL_KEYS, dropna=False, sort=True)[numeric].median()
    out["n"] = rows.groupby(CELL_KEYS, dropna=False, sort=True).size()
    out = out.reset_index()
    iceberg = out["format"] == ICEBERG
    out.loc[iceberg, ["partitions_listed", "files_listed"]] = np.nan
    out.loc[~iceberg, ["manifests_read", "entries_read", "entries_matched"]] = np.nan
    out["manifest_bytes_read"] = np.nan
    out["largest_manifest_entries"] = np.nan
    if windows is not None and not windows.empty:
        keyed = windows.rename(columns={"profile": "layout"}).set_index(["dataset", "layout", "window"])
        at = pd.MultiIndex.from_frame(out[["dataset", "layout", "window"]])
        for column in ("manifests_read", "entries_read", "manifest_bytes_read", "largest_manifest_entries"):
            if column in keyed.columns:
                listed = pd.Series(keyed[column].reindex(at).to_numpy(float), index=out.index)
                out.loc[iceberg, column] = out.loc[iceberg, column].fillna(listed[iceberg])
    out["largest_manifest_entries"] = out["largest_manifest_entries"].fillna(largest_read(out))
    out = with_busiest(out, out["planner_threads"])
    out["data_files"] = data_files(out, states)
    order = ["format", "mode", "data_files", "dataset", "layout", "query_id", "window_hours"]
    return out.sort_values(order, kind="stable").reset_index(drop=True)


def busiest_thread_entries(entries_read: Any, largest_manifest_entries: Any, threads: Any) -> Any:
    """The entries the busiest planning thread reads (module docstring): the entries read spread
    over `threads`, but never fewer than the largest manifest read, which one thread reads alone.
    Numbers or aligned Series alike."""
    return np.maximum(entries_read / threads, largest_manifest_entries)


def busiest_thread_kb(busiest_entries: Any, manifest_bytes_read: Any, entries_read: Any) -> Any:
    """The KB the busiest planning thread reads: its entries at the bytes per entry of the
    manifests read (manifest_bytes_read / entries_read), 0 where nothing is read. Where the bytes
    are unknown (runs whose windows.csv does not record them, such as the real-data reference
    runs), at ENTRY_BYTES per entry, as `largest_read` takes them."""
    busiest = np.asarray(busiest_entries, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_entry = np.asarray(manifest_bytes_read, dtype=float) / np.asarray(entries_read, dtype=float)
    per_entry = np.where(np.isfinite(per_entry), per_entry, ENTRY_BYTES)
    return np.where(busiest == 0, 0.0, busiest * per_entry / 1e3)


def with_busiest(reads: pd.DataFrame, threads: Any) -> pd.DataFrame:
    """`reads` (manifests_read, entries_read, largest_manifest_entries, entries_matched,
    manifest_bytes_read) with the busiest thread's entries and KB, on `threads` planning threads
    (a number or a Series aligned with `reads`): what every prediction and fit derives alike."""
    entries = reads["entries_read"].astype(float)
    busiest = busiest_thread_entries(entries, reads["largest_manifest_entries"].astype(float), threads)
    found = reads.get("manifest_bytes_read", np.nan)
    kb = busiest_thread_kb(busiest, found, entries)
    return reads.assign(
        busiest_thread_entries=busiest, busiest_thread_kb=pd.Series(kb, index=reads.index, dtype=float)
    )


def small_manifests(reads: pd.DataFrame) -> pd.Series:
    """Whether each window (manifests_read, manifest_bytes_read) is of the many-small-manifests
    regime: more than one manifest read, of at most SMALL_MANIFEST_BYTES on average (False where
    the bytes are unknown)."""
    manifests = reads["manifests_read"].astype(float)
    found = reads.get("manifest_bytes_read", np.nan)
    per_manifest = pd.Series(found, index=reads.index, dtype=float) / manifests
    return (manifests > 1) & (per_manifest <= SMALL_MANIFEST_BYTES)


def regime_mode(mode: str) -> str:
    """The key of a planning mode's many-small-manifests fit in a calibration: `local/small_manifests`."""
    return f"{mode}/{SMALL_MANIFESTS}"


def largest_read(table: pd.DataFrame) -> pd.Series:
    """The entries of the largest manifest each Iceberg cell reads, from its layout, for runs whose
    windows.csv does not record it: a `rewrite_<size>` layout cuts a manifest every size / bytes
    per entry entries (bytes per entry from manifest_bytes_read, else ENTRY_BYTES), so a window
    reads at most that many in one manifest; other layouts (as ingested: manifests of one size)
    the mean, entries_read / manifests_read."""
    target = table["layout"].map(_target_bytes)
    per_entry = (table["manifest_bytes_read"] / table["entries_read"]).fillna(ENTRY_BYTES)
    cut = np.minimum(table["entries_read"], np.floor(target / per_entry))
    return cut.fillna(table["entries_read"] / table["manifests_read"])


def _target_bytes(layout: Any) -> float:
    """`rewrite_64mb` -> 67108864.0; NaN for a layout that is not a rewrite to a size."""
    text = str(layout)
    if not text.startswith("rewrite_"):
        return math.nan
    try:
        return float(parse_size(text.removeprefix("rewrite_")))
    except ValueError:
        return math.nan


def data_files(table: pd.DataFrame, states: pd.DataFrame | None = None) -> pd.Series:
    """The data files of each cell's dataset: from states.csv when it names the dataset, else the
    most entries (or files, for Parquet) a cell of that dataset read."""
    seen = table["entries_read"].fillna(table["files_listed"]).groupby(table["dataset"]).transform("max")
    if states is None or states.empty:
        return seen
    known = states.groupby("dataset")["data_files"].max()
    return table["dataset"].map(known).fillna(seen)
