"""The layout `rewrite_manifests` would give a table, simulated on the table's own entries.

What Iceberg's Spark action does (RewriteManifestsSparkAction, Iceberg 1.10), and so what this
module reproduces:
- it takes the data manifests of the default spec and asks for n = ceil(their bytes / target)
  manifests (bytes as stored: each manifest's header counts, and so do its deleted entries);
- with n = 1 and one manifest it does nothing;
- it range-partitions the live entries into n tasks by partition value (the spec's fields in
  order, or the fields `sortBy` names), so one partition's entries never straddle two tasks, and
  sorts each task; an unpartitioned table is split into n tasks at random;
- each task writes its entries through a rolling writer that starts a new manifest at 1.2 x target.

A manifest's bytes are the table's own fixed part (the Avro header with the table's schema and
spec, about 7 kB for three columns) plus its entries at the table's bytes per entry, both read off
the table's manifests (`sizes`). The target itself is not the size of the result: manifests hold
only live entries and compress them, so they come out much smaller than the target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from icelab.health.reader import DATA, Metadata

# Bytes of a data manifest holding one entry, written by Iceberg 1.10 through Spark SQL for a
# table of three columns partitioned by day (7,324 bytes; 7,079 unpartitioned, 9,681 for 41
# columns): the fixed part when a table's own manifests cannot tell it.
ONE_ENTRY_MANIFEST = 7324
# The rolling writer's allowance over the target (Iceberg: "the estimation is not precise").
ROLL_FACTOR = 1.2


@dataclass(frozen=True)
class Sizes:
    """A data manifest's bytes as `overhead + per_entry x entries` (entries live and deleted)."""

    overhead: float
    per_entry: float

    def of(self, entries: float) -> float:
        return self.overhead + self.per_entry * entries


def sizes(data: pd.DataFrame) -> Sizes:
    """The size line of this table's data manifests: least squares of bytes on entries when their
    entry counts differ and the line is plausible (a fixed part between 0 and the smallest
    manifest), else the fixed part of a one-entry manifest and the rest shared by the entries."""
    entries = (data.entries + data.deleted_entries).to_numpy(dtype=float)
    length = data.length.to_numpy(dtype=float)
    if len(set(entries)) >= 2:
        slope, intercept = np.polyfit(entries, length, 1)
        if slope > 0 and 0 <= intercept <= length.min():
            return Sizes(float(intercept), float(slope))
    overhead = min(float(ONE_ENTRY_MANIFEST), float(length.min()) if len(length) else ONE_ENTRY_MANIFEST)
    total = float(entries.sum())
    per_entry = (float(length.sum()) - overhead * len(length)) / total if total else 0.0
    return Sizes(overhead, max(per_entry, 1.0))


def _order(key: tuple, positions: list[int]) -> tuple:
    # Spark sorts nulls first in ascending order.
    return tuple((key[i] is not None, key[i] if key[i] is not None else 0) for i in positions)


def _runs(counts: list[int], tasks: int) -> list[list[int]]:
    """Indexes of `counts` (partitions in sort order) cut into at most `tasks` runs of about equal
    entries, only between partitions, as a range partitioner cuts at its quantiles."""
    total = sum(counts)
    runs: list[list[int]] = [[]]
    done = 0
    for i, n in enumerate(counts):
        if runs[-1] and len(runs) < tasks and done >= total * len(runs) / tasks:
            runs.append([])
        runs[-1].append(i)
        done += n
    return runs


@dataclass
class Simulated:
    """The table's manifests after the simulated rewrite, as `Metadata.manifests` holds them."""

    target: int
    tasks: int  # n, the manifests Iceberg asks for
    sizes: Sizes
    manifests: pd.DataFrame  # every manifest of the table after it (the rewritten ones new)
    rewritten: pd.DataFrame  # the new data manifests alone
    changes: bool  # False: rewrite_manifests would leave the table as it is

    def as_json(self) -> dict[str, Any]:
        return {
            "target_bytes": self.target,
            "tasks": self.tasks,
            "changes": self.changes,
            "manifests": len(self.rewritten),
            "manifest_bytes": round(float(self.rewritten.length.sum())),
            "sizes": [round(float(x)) for x in self.rewritten.length],
            "overhead_bytes": round(self.sizes.overhead),
            "bytes_per_entry": round(self.sizes.per_entry, 1),
        }


def simulate(
    meta: Metadata, target: int, cluster: list[str] | None = None, written: Sizes | None = None
) -> Simulated:
    """The manifests `rewrite_manifests` with this target (and `sortBy(cluster)`) would leave.

    Args:
        written: the bytes of the manifests the rewrite writes (`manifest_bytes.written_sizes`);
            None: the line of the table's own manifests (`sizes`).
    """
    spec = meta.specs[meta.default_spec_id]
    mans = meta.manifests
    mine = (mans.content == DATA) & (mans.spec_id == spec.spec_id)
    chosen = mans[mine]
    model = written or (sizes(chosen) if len(chosen) else Sizes(ONE_ENTRY_MANIFEST, 1.0))
    tasks = max(1, math.ceil(int(chosen.length.sum()) / target)) if len(chosen) else 0
    if len(chosen) == 0 or (tasks == 1 and len(chosen) == 1):
        return Simulated(target, tasks, model, mans, chosen, changes=False)
    parts = meta.partitions
    live = parts[(parts.spec_id == spec.spec_id) & (parts.files > 0)]
    names = [f.name for f in spec.fields]
    order = [names.index(n) for n in cluster] if cluster else list(range(len(names)))
    ranked = sorted(zip(live.key, live.files, strict=True), key=lambda kf: _order(kf[0], order))
    counts = [int(f) for _, f in ranked]
    if not spec.fields:
        # Unpartitioned: a random split into `tasks` equal shares of the entries.
        share = sum(counts) / tasks
        groups = [[(None, share)] for _ in range(tasks)]
    else:
        groups = [[ranked[i] for i in run] for run in _runs(counts, tasks)]
    rows = []
    for group in groups:
        for entries, keys in _rolled(group, model, target):
            rows.append(_manifest(spec.spec_id, entries, keys, model, len(spec.fields)))
    rewritten = pd.DataFrame(rows, columns=[*mans.columns])
    after = pd.concat([mans[~mine], rewritten], ignore_index=True)
    return Simulated(target, tasks, model, after, rewritten, changes=True)


def _rolled(group: list[tuple[Any, float]], model: Sizes, target: int) -> list[tuple[float, list[Any]]]:
    """One task's entries cut into manifests where the rolling writer would start a new one."""
    limit = max(1.0, (ROLL_FACTOR * target - model.overhead) / model.per_entry)
    out: list[tuple[float, list[Any]]] = [(0.0, [])]
    for key, count in group:
        left = float(count)
        while left > 0:
            entries, keys = out[-1]
            if entries >= limit:
                out.append((0.0, []))
                entries, keys = out[-1]
            take = min(left, limit - entries)
            out[-1] = (entries + take, [*keys, key])
            left -= take
    return [o for o in out if o[0] > 0]


def _manifest(spec_id: int, entries: float, keys: list[Any], model: Sizes, fields: int) -> dict[str, Any]:
    bounds = []
    for i in range(fields):
        values = [k[i] for k in keys if k is not None]
        present = [v for v in values if v is not None]
        has_null = len(present) < len(values)
        bounds.append((min(present), max(present), has_null) if present else (None, None, has_null))
    return {
        "path": "(simulated)",
        "length": round(model.of(entries)),
        "content": DATA,
        "spec_id": spec_id,
        "added_snapshot_id": None,
        "entries": round(entries),
        "deleted_entries": 0,
        "bounds": tuple(bounds),
    }
