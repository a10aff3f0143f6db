"""How a table ingests, fitted from its own history: the first part of a maintenance plan.

The timeline is the table's own partition time: the units of its time field (hours, days,
months, years) that its commits add data to. A history written in minutes (a test table, a
backfill) still has one. Commit times are used besides, where the history keeps them.

Per commit that added data (`Commit`, read by `icelab.health.history`):
- the time units its data entries land in; the newest unit any commit so far added is the
  table's *head*, and an entry behind the head is *late*, by the units it lags;
- its data entries and delete-file entries.

The model (`fit`) is what a horizon's commits are drawn from: commits per day of data (counted
from the first commit that moves the head past the first commit's data, so that a backfill's
days do not dilute it), entries
per commit, the units a commit touches, the late share and lag, the deletes, and the table's
merge settings (`commit.manifest-merge.enabled` and the rest, Iceberg's defaults where unset).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from icelab.core.units import plural

# Days in one unit of a time field: a month and a year as Iceberg's calendar averages them.
DAYS_PER_UNIT = {"hour": 1 / 24, "day": 1.0, "month": 365.2425 / 12, "year": 365.2425}
# Iceberg's defaults for the settings that decide what an append does to the manifests
# (TableProperties: MANIFEST_MERGE_ENABLED, MANIFEST_MIN_MERGE_COUNT, MANIFEST_TARGET_SIZE_BYTES).
MERGE_DEFAULTS = {
    "commit.manifest-merge.enabled": "true",
    "commit.manifest.min-count-to-merge": "100",
    "commit.manifest.target-size-bytes": str(8 * 1024 * 1024),
}
# The least a fit rests on: two commits that added data, the head moved past the first one's data.
MIN_COMMITS = 2


class TooShort(ValueError):
    """A history with too little in it to fit an ingest model; the message says what it holds."""


@dataclass(frozen=True)
class Commit:
    """One commit that added data entries, as the table's live entries and snapshots show it.

    Attributes:
        order: the commit's place in the history (its data sequence number, else its commit
            time, else its newest unit: a format-1 table whose snapshots expired has no other).
        snapshot_id: the snapshot that added the entries.
        units: data entries added per time unit of the default spec's time field.
        delete_entries: delete-file entries it added (position, equality, deletion vectors).
        committed_us: its commit time (microseconds, UTC), None once its snapshot expired.
    """

    order: int
    snapshot_id: int
    units: Mapping[int, int]
    delete_entries: int = 0
    committed_us: int | None = None

    @property
    def entries(self) -> int:
        return int(sum(self.units.values()))


@dataclass(frozen=True)
class Spread:
    """A quantity's median, 90th percentile and largest over the commits."""

    median: float
    p90: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(float(np.median(values)), float(np.percentile(values, 90)), float(max(values)))

    def text(self, digits: int = 0) -> str:
        return f"median {self.median:,.{digits}f}, p90 {self.p90:,.{digits}f}, max {self.max:,.{digits}f}"


@dataclass(frozen=True)
class IngestModel:
    """A table's ingest, as its history shows it (`fit`)."""

    unit: str  # the time field's unit: hour, day, month or year
    commits: int  # commits that added data
    first_unit: int
    head_unit: int  # the newest unit a commit added data to
    data_days: float  # the data time the commits span, in days
    commits_per_day: float  # per day of data time the head moved past the first commit's data
    entries_per_commit: Spread
    units_per_commit: Spread  # distinct time units a commit adds data to
    late_share: float  # of the data entries added, the share behind the head when added
    late_lag_units: Spread | None  # how far behind the head the late entries land (None: none late)
    delete_commits: int  # commits that added delete files
    delete_entries_per_commit: float  # over the commits that added any
    merge: dict[str, str]  # the merge settings on append, Iceberg's defaults where unset
    merge_defaults: list[str] = field(default_factory=list)  # which of them are defaults
    timed_commits: int = 0  # commits whose snapshot is kept, with its commit time
    commits_per_wall_day: float | None = None  # over the kept commit times (None: under two)

    @property
    def merging(self) -> bool:
        return self.merge["commit.manifest-merge.enabled"].strip().lower() == "true"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        """The model in a few lines, with how much history it rests on."""
        per = "commit" if self.commits == 1 else "commits"
        wall = self.commits_per_wall_day
        wall_text = f"; {wall:,.2f} per day of commit time" if wall else ""
        lines = [
            f"ingest model, from {plural(self.commits, 'commit')} that added data over "
            f"{self.data_days:,.1f} days of data time ({self.unit} partitions), "
            f"{self.timed_commits} of the {per} with a commit time:",
            f"  commits       {self.commits_per_day:,.2f} per day of data{wall_text}",
            f"  entries       per commit {self.entries_per_commit.text()}",
            f"  {self.unit}s touched  per commit {self.units_per_commit.text()}",
        ]
        if self.late_lag_units is None:
            lines.append("  late data     none: every entry landed at or ahead of the head")
        else:
            lines.append(
                f"  late data     {self.late_share:.1%} of entries, {self.late_lag_units.text()} "
                f"{self.unit}s behind the head"
            )
        lines.append(
            f"  deletes       {plural(self.delete_commits, 'commit')} added delete files"
            + (f", {self.delete_entries_per_commit:,.1f} entries each" if self.delete_commits else "")
        )
        settings = ", ".join(
            f"{k.removeprefix('commit.')}={v}" + (" (default)" if k in self.merge_defaults else "")
            for k, v in self.merge.items()
        )
        lines.append(f"  on append     {settings}")
        return "\n".join(lines)


def fit(commits: Sequence[Commit], unit: str, properties: Mapping[str, str]) -> IngestModel:
    """The ingest model of a history: `commits` in any order, `unit` the time field's unit.

    Raises:
        TooShort: under `MIN_COMMITS` commits that added data, or a head that never moved
            past the first commit's data: the message says what the history holds.
    """
    data = sorted((c for c in commits if c.entries), key=lambda c: c.order)
    units = sorted({u for c in data for u in c.units})
    head, late, lags, moved = None, 0, [], None
    for i, c in enumerate(data):
        for u, n in c.units.items():
            # Behind the head as it stood before this commit: a commit's own spread is not late.
            if head is not None and u < head:
                late += n
                lags.extend([head - u] * n)
        newest = max(c.units)
        if head is not None and moved is None and newest > max(data[0].units):
            moved = i
        head = newest if head is None else max(head, newest)
    advance = (units[-1] - max(data[0].units)) if data else 0
    if len(data) < MIN_COMMITS or moved is None:
        raise TooShort(
            f"too little history to fit: {plural(len(data), 'commit')} that added data, over "
            f"{plural(len(units), unit)} of data, the head {plural(advance, unit)} past the first "
            f"commit's data (at least {MIN_COMMITS} commits, the head past the first commit's data)"
        )
    span_units = units[-1] - units[0] + 1
    days = span_units * DAYS_PER_UNIT[unit]
    deleting = [c.delete_entries for c in commits if c.delete_entries]
    timed = sorted(c.committed_us for c in data if c.committed_us is not None)
    wall_days = (timed[-1] - timed[0]) / 86_400e6 if len(timed) > 1 else 0.0
    merge = {k: str(properties.get(k, v)) for k, v in MERGE_DEFAULTS.items()}
    return IngestModel(
        unit=unit,
        commits=len(data),
        first_unit=units[0],
        head_unit=units[-1],
        data_days=days,
        commits_per_day=(len(data) - moved) / (advance * DAYS_PER_UNIT[unit]),
        entries_per_commit=Spread.of([c.entries for c in data]),
        units_per_commit=Spread.of([len(c.units) for c in data]),
        late_share=late / sum(c.entries for c in data),
        late_lag_units=Spread.of(lags) if lags else None,
        delete_commits=len(deleting),
        delete_entries_per_commit=statistics.fmean(deleting) if deleting else 0.0,
        merge=merge,
        merge_defaults=[k for k in MERGE_DEFAULTS if k not in properties],
        timed_commits=len(timed),
        commits_per_wall_day=(len(timed) - 1) / wall_days if wall_days > 0 else None,
    )
