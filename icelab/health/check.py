"""Judge a table's metadata: manifests per partition for any spec, statistics, the verdict, and the
pressure of small files, delete files and old snapshots.

Per partition (a partition is a spec and one value per field of it), two counts, as
`icelab.bench.manifest_stats` gives them for day partitions:
- exact: data manifests holding a live entry of the partition;
- bounds: data manifests of the partition's spec whose partition bounds include it on every
  field, which is what planning must open for a filter selecting just that partition.
Per data manifest, `span` is the share of the table's partitions its bounds include (for a day
partitioned table whose days all hold data, the share of the days between its bounds, as
`manifest_health` computes it).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from icelab.bench.manifest_stats import health_stats, statistics
from icelab.core.config import Threshold, window_length
from icelab.health.forecast import PlanningModel, window_reads
from icelab.health.orphans import orphaned, shared_location
from icelab.health.policy import Judged, judge
from icelab.health.reader import DATA, Metadata
from icelab.health.spec import Field, Spec

# Iceberg's defaults for expire_snapshots when the table sets none.
MAX_SNAPSHOT_AGE_MS = "history.expire.max-snapshot-age-ms"
MIN_SNAPSHOTS = "history.expire.min-snapshots-to-keep"
DEFAULT_MAX_AGE_MS = 5 * 24 * 3600 * 1000
# rewrite_data_files acts on a file group of at least this many small files (its min-input-files).
MIN_INPUT_FILES = 5
_DURATION = re.compile(r"^(\d+)\s*([smhd])$")
_UNIT_US = {"s": 1_000_000, "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000}
# Pairs of (partition, manifest) compared per block: bounds the memory of the inclusion matrix.
BLOCK = 20_000_000


def parse_duration(text: str) -> int:
    """`7d`, `12h`, `30m`, `0s` -> microseconds.

    Raises:
        ValueError: for anything else.
    """
    match = _DURATION.fullmatch(str(text).strip())
    if not match:
        raise ValueError(f"bad duration '{text}': use a whole number with s, m, h or d, e.g. 7d")
    return int(match.group(1)) * _UNIT_US[match.group(2)]


def now_us() -> int:
    """The current time in microseconds since 1970 (UTC)."""
    return int(dt.datetime.now(dt.timezone.utc).timestamp() * 1_000_000)


def utc_text(micros: int) -> str:
    """A moment as Spark SQL's timestamp literal text, with its zone: `2026-11-16 17:00:00.000000+00:00`."""
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f+00:00")


@dataclass(frozen=True)
class Policy:
    """What the doctor judges against.

    Attributes:
        rules: the manifest rules (`<exact|bounds|span>_<statistic>` -> levels), as manifest_health's.
        windows: time windows to predict planning for (`1d`, `7d`, ...).
        retain_us: expire snapshots older than this; None: the table's max snapshot age.
        retain_last: snapshots always kept; None: the table's min snapshots to keep.
        small_file_bytes: a data file below this is small; None: 75% of the table's target file size.
    """

    rules: dict[str, Threshold]
    windows: tuple[str, ...] = ("1d", "7d", "30d")
    retain_us: int | None = None
    retain_last: int | None = None
    small_file_bytes: int | None = None


def _values(column: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Values as a comparable array (int64 when all are ints), and where they are null."""
    nulls = np.array([v is None for v in column], dtype=bool)
    present = [v for v in column if v is not None]
    filler = present[0] if present else 0
    filled = [filler if v is None else v for v in column]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return np.array(filled, dtype=np.int64), nulls
    array = np.empty(len(filled), dtype=object)
    array[:] = filled
    return array, nulls


def inclusion(keys: list[tuple], bounds: list[tuple], fields: tuple[Field, ...]) -> np.ndarray:
    """[partition, manifest]: whether the manifest's partition bounds include the partition.

    A null value is included where the manifest's summary says it contains nulls; a manifest
    without bounds on a field (all its values null, or no entries) includes no value there.
    """
    include = np.ones((len(keys), len(bounds)), dtype=bool)
    for i, _ in enumerate(fields):
        vals, val_null = _values([k[i] for k in keys])
        lows, low_null = _values([b[i][0] if i < len(b) else None for b in bounds])
        highs, high_null = _values([b[i][1] if i < len(b) else None for b in bounds])
        has_null = np.array([bool(b[i][2]) if i < len(b) else False for b in bounds], dtype=bool)
        inside = (vals[:, None] >= lows[None, :]) & (vals[:, None] <= highs[None, :])
        inside &= ~(low_null | high_null)[None, :]
        inside[val_null, :] = False
        inside |= val_null[:, None] & has_null[None, :]
        include &= inside
    return include


def bounds_counts(partitions: pd.DataFrame, manifests: pd.DataFrame, specs: dict[int, Spec]) -> None:
    """Add `bounds` to each partition and `span_partitions` to each data manifest (in place)."""
    partitions["bounds"] = 0
    manifests["span_partitions"] = 0
    for spec_id, spec in specs.items():
        prow = partitions.index[(partitions.spec_id == spec_id) & (partitions.files > 0)]
        mrow = manifests.index[(manifests.spec_id == spec_id) & (manifests.content == DATA)]
        if len(prow) == 0 or len(mrow) == 0:
            continue
        keys = list(partitions.loc[prow, "key"])
        bounds = list(manifests.loc[mrow, "bounds"])
        per_partition = np.zeros(len(keys), dtype=np.int64)
        per_manifest = np.zeros(len(bounds), dtype=np.int64)
        step = max(1, BLOCK // max(len(bounds), 1))
        for start in range(0, len(keys), step):
            block = inclusion(keys[start : start + step], bounds, spec.fields)
            per_partition[start : start + step] = block.sum(axis=1)
            per_manifest += block.sum(axis=0)
        partitions.loc[prow, "bounds"] = per_partition
        manifests.loc[mrow, "span_partitions"] = per_manifest


@dataclass
class Health(Judged):
    """One table state's report: counts, statistics, verdict and pressure."""

    files: dict[str, Any] = field(default_factory=dict)
    deletes: dict[str, Any] = field(default_factory=dict)
    snapshots: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    windows: list[dict[str, Any]] = field(default_factory=list)
    orphans: dict[str, Any] = field(default_factory=dict)
    # The plan of a window holding no data, measured on the table (`anchor.fixed_window`).
    fixed: dict[str, Any] = field(default_factory=dict)
    # Partitions no time window opens (a null time value), left out of the statistics.
    unwindowed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def data_manifests(self) -> pd.DataFrame:
        return self.manifests[self.manifests.content == DATA]

    @property
    def live_partitions(self) -> pd.DataFrame:
        return self.partitions[self.partitions.files > 0]

    @property
    def judged_partitions(self) -> pd.DataFrame:
        """The live partitions the statistics judge: all but those no time window opens."""
        live = self.live_partitions
        return live[~live.label.isin({u["partition"] for u in self.unwindowed})]

    @property
    def expiry_advised(self) -> bool:
        return bool(self.snapshots.get("expirable", 0))

    def as_json(self) -> dict[str, Any]:
        """The report without the per-row frames (`manifests`, `partitions` and `stats` as
        manifest_health's report.json has them, and the rest)."""
        data = self.data_manifests
        return {
            "state": self.state,
            "table": self.table,
            "manifests": len(data),
            "manifest_bytes": int(data.length.sum()),
            "delete_manifests": int((self.manifests.content != DATA).sum()),
            "delete_manifest_bytes": int(self.manifests.length[self.manifests.content != DATA].sum()),
            "partitions": len(self.live_partitions),
            "stats": self.stats,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "files": self.files,
            "deletes": self.deletes,
            "snapshots": self.snapshots,
            "metadata": self.metadata,
            "windows": self.windows,
            "fixed_plan": self.fixed,
            "unwindowed": self.unwindowed,
            "orphans": self.orphans,
        }


def _snapshots(meta: Metadata, policy: Policy, now: int) -> dict[str, Any]:
    props = meta.properties
    if policy.retain_us is not None:
        retain_us, retain_from = policy.retain_us, "given"
    elif MAX_SNAPSHOT_AGE_MS in props:
        retain_us, retain_from = int(props[MAX_SNAPSHOT_AGE_MS]) * 1000, MAX_SNAPSHOT_AGE_MS
    else:
        retain_us, retain_from = DEFAULT_MAX_AGE_MS * 1000, "Iceberg's default"
    retain_last = policy.retain_last if policy.retain_last is not None else int(props.get(MIN_SNAPSHOTS, 1))
    snaps = meta.snapshots.sort_values("committed_us", ascending=False, ignore_index=True)
    cutoff = now - retain_us
    kept = set(snaps.snapshot_id[:retain_last]) | set(meta.refs.values())
    if meta.current_snapshot_id is not None:
        kept.add(meta.current_snapshot_id)
    old = snaps[snaps.committed_us < cutoff]
    expirable = old[~old.snapshot_id.isin(kept)]
    oldest = int(snaps.committed_us.min()) if len(snaps) else None
    return {
        "count": len(snaps),
        "current": meta.current_snapshot_id,
        "retain_us": retain_us,
        "retain": _duration_text(retain_us),
        "retain_from": retain_from,
        "retain_last": retain_last,
        "older_than_retention": len(old),
        "expirable": len(expirable),
        "cutoff_us": cutoff,
        "cutoff_utc": utc_text(cutoff),
        "oldest_age_s": round((now - oldest) / 1e6, 1) if oldest is not None else None,
        "refs": len(meta.refs),
    }


def _duration_text(micros: int) -> str:
    for unit in ("d", "h", "m", "s"):
        if micros % _UNIT_US[unit] == 0:
            return f"{micros // _UNIT_US[unit]}{unit}"
    return f"{micros / 1e6:.0f}s"


def _files(parts: pd.DataFrame, meta: Metadata) -> dict[str, Any]:
    live = parts[parts.files > 0]
    files = int(live.files.sum())
    small = int(live.small_files.sum())
    candidates = live[live.small_files >= MIN_INPUT_FILES]
    return {
        "data_files": files,
        "data_bytes": int(live.bytes.sum()),
        "records": int(live.records.sum()),
        "mean_file_bytes": round(float(live.bytes.sum()) / files, 1) if files else None,
        "small_file_bytes": meta.small_file_bytes,
        "small_files": small,
        "small_share": round(small / files, 4) if files else 0.0,
        "per_partition": statistics(live.files) if len(live) else {},
        "compaction_partitions": len(candidates),
        "compaction_files": int(candidates.small_files.sum()),
    }


def _deletes(parts: pd.DataFrame, mans: pd.DataFrame) -> dict[str, Any]:
    data_files = int(parts.files.sum())
    deletes = int(parts.delete_files.sum())
    return {
        "delete_files": deletes,
        "position_delete_files": int(parts.position_delete_files.sum()),
        "deletion_vectors": int(parts.deletion_vectors.sum()),
        "equality_delete_files": int(parts.equality_delete_files.sum()),
        "delete_records": int(parts.delete_records.sum()),
        "delete_bytes": int(parts.delete_bytes.sum()),
        "delete_manifests": int((mans.content != DATA).sum()),
        "delete_manifest_bytes": int(mans.length[mans.content != DATA].sum()),
        "partitions_with_deletes": int((parts.delete_files > 0).sum()),
        "delete_files_per_data_file": round(deletes / data_files, 4) if data_files else None,
        "delete_records_share": round(int(parts.delete_records.sum()) / max(int(parts.records.sum()), 1), 6),
    }


def time_field(meta: Metadata) -> tuple[Spec, Field] | None:
    """The default spec's time field (what a time window prunes on), if it has one."""
    spec = meta.specs.get(meta.default_spec_id)
    if spec is None or spec.time_field is None:
        return None
    return spec, spec.time_field


def _time_units(meta: Metadata, parts: pd.DataFrame) -> tuple[Spec, Field, pd.DataFrame, list[int]] | None:
    """The default spec, its time field, its live partitions and the time units they hold (None
    without a time field or live data)."""
    found = time_field(meta)
    if found is None:
        return None
    spec, tfield = found
    index = spec.fields.index(tfield)
    live = parts[(parts.files > 0) & (parts.spec_id == spec.spec_id)]
    units = [k[index] for k in live.key if k[index] is not None]
    return (spec, tfield, live, units) if units else None


def window_kept(meta: Metadata, mans: pd.DataFrame, parts: pd.DataFrame, name: str) -> dict[str, Any] | None:
    """Data manifests a time window ending at the newest data keeps, with their bytes.

    The window covers [end - length, end), where end is the end of the newest time unit holding
    live data; a manifest is kept when its bounds on its spec's time field meet the window (a
    manifest of a spec without a time field is always kept), as partition pruning decides.
    """
    found = _time_units(meta, parts)
    if found is None:
        return None
    _, tfield, _, units = found
    end = tfield.unit_start(max(units) + 1)
    length = window_length(name)
    # `full` starts at the oldest unit holding data.
    oldest = tfield.unit_start(min(units))
    start = oldest if length is None else end - int(length.total_seconds()) * 1_000_000
    return window_between(meta, mans, parts, name, start, end)


def window_between(
    meta: Metadata, mans: pd.DataFrame, parts: pd.DataFrame, name: str, start: int, end: int
) -> dict[str, Any] | None:
    """What a plan of the time span [start, end) (microseconds) reads, as partition pruning
    decides: the data manifests whose bounds on the time field meet it, the delete manifests that
    do, their entries and bytes, and the live entries of the partitions inside it."""
    found = _time_units(meta, parts)
    if found is None:
        return None
    spec, tfield, live, units = found
    index = spec.fields.index(tfield)
    data = mans[mans.content == DATA]
    mask = _kept(meta, data, start, end)
    # Planning opens the delete manifests whose bounds meet the window too.
    deletes = mans[mans.content != DATA]
    delete_mask = _kept(meta, deletes, start, end)
    first, last = tfield.unit_of(start), tfield.unit_of(end - 1)
    entries = data.entries[mask]
    matched = sum(
        int(files)
        for key, files in zip(live.key, live.files, strict=True)
        if key[index] is not None and first <= key[index] <= last
    )
    return {
        "window": name,
        "start_utc": utc_text(start),
        "end_utc": utc_text(end),
        # The same instants as numbers, for what plans the window again (icelab.health.measured).
        "start_us": start,
        "end_us": end,
        "unit": tfield.time_unit,
        "span_units": last - first + 1,
        "units": len({u for u in units if first <= u <= last}),
        "manifests": int(mask.sum()),
        "manifest_bytes": int(data.length[mask].sum()) if len(data) else 0,
        # What planning reads of them, as the cost model counts it (icelab.health.forecast).
        "entries_read": int(entries.sum()),
        "largest_manifest_entries": int(entries.max()) if len(entries) else 0,
        "entries_matched": matched,
        "delete_manifests": int(delete_mask.sum()),
        "delete_manifest_bytes": int(deletes.length[delete_mask].sum()) if len(deletes) else 0,
        "delete_entries_read": int(deletes.entries[delete_mask].sum()) if len(deletes) else 0,
    }


def spans_read(meta: Metadata, spans: Sequence[tuple[str, int, int]]) -> list[dict[str, Any] | None]:
    """For each (name, start, end) span in microseconds, what a plan of it reads of the table as
    `meta` holds it (`window_between`); the cost model's inputs for a query whose time filter is
    exactly that span, whatever the table's partitioning."""
    parts, mans = meta.partitions.copy(), meta.manifests.copy()
    bounds_counts(parts, mans, meta.specs)
    return [window_between(meta, mans, parts, name, start, end) for name, start, end in spans]


def _kept(meta: Metadata, mans: pd.DataFrame, start: int, end: int) -> np.ndarray:
    """Which of `mans` a time window [start, end) keeps: their bounds on their spec's time field
    meet it (a manifest of a spec without a time field is always kept)."""
    kept = []
    for _, m in mans.iterrows():
        mspec = meta.specs.get(m.spec_id)
        mfield = mspec.time_field if mspec is not None else None
        if mfield is None:
            kept.append(True)
            continue
        i = mspec.fields.index(mfield)
        low, high, _ = m.bounds[i] if i < len(m.bounds) else (None, None, False)
        if low is None or high is None:
            kept.append(False)
            continue
        first, last = mfield.unit_of(start), mfield.unit_of(end - 1)
        kept.append(bool(low <= last and high >= first))
    return np.array(kept, dtype=bool)


def examine(
    meta: Metadata,
    state: str,
    table: str,
    policy: Policy,
    model: PlanningModel | None = None,
    now: int | None = None,
    copy: bool = False,
) -> Health:
    """Counts, statistics, verdict and pressure for one table state, and each window's planning
    as `model` predicts it (none without a model)."""
    now = now_us() if now is None else now
    parts = meta.partitions.copy()
    mans = meta.manifests.copy()
    bounds_counts(parts, mans, meta.specs)
    live = parts[parts.files > 0]
    data = mans[mans.content == DATA]
    mans["span"] = mans.span_partitions / max(len(live), 1)
    span = mans.span[mans.content == DATA]
    windows = [w for w in (window_kept(meta, mans, parts, name) for name in policy.windows) if w is not None]
    # A partition no window opens (a null time value, or older than every window) does not
    # decide the verdict: it is reported apart.
    why_not = _unwindowed(meta, live, windows)
    judged = live[why_not.isna()]
    stats = health_stats(judged.exact, judged.bounds, span, data.length, data.entries)
    verdict, reasons = judge(stats, policy.rules)
    if model is not None:
        for w, predicted in zip(windows, model.predictions([window_reads(w) for w in windows]), strict=True):
            w["predicted"] = predicted
    metadata = {
        "metadata_json_bytes": meta.sizes.get("metadata_json"),
        "metadata_files_in_log": meta.metadata_files,
        "manifest_list_bytes": meta.sizes.get("manifest_list"),
        "manifest_bytes": int(mans.length.sum()),
        "format_version": meta.format_version,
    }
    return Health(
        state=state,
        table=table,
        partitions=parts,
        manifests=mans,
        files=_files(parts, meta),
        deletes=_deletes(parts, mans),
        stats=stats,
        verdict=verdict,
        reasons=reasons,
        snapshots=_snapshots(meta, policy, now),
        metadata=metadata,
        windows=windows,
        orphans=_orphans(meta, now, copy),
        unwindowed=[
            {
                "partition": r.label,
                "why": why,
                "files": int(r.files),
                "exact": int(r.exact),
                "bounds": int(r.bounds),
            }
            for r, why in zip(live.itertuples(), why_not, strict=True)
            if isinstance(why, str)
        ],
    )


NULL_TIME = "null"  # its time value is null: no time window opens it
OUTSIDE = "outside"  # its time value lies outside every window the user plans


def _unwindowed(meta: Metadata, live: pd.DataFrame, windows: list[dict[str, Any]]) -> pd.Series:
    """Per live partition, why no planned window opens it (`NULL_TIME` or `OUTSIDE`), else None.
    Only partitions of the default spec with a time field qualify; without windows, none."""
    why = pd.Series([None] * len(live), index=live.index, dtype=object)
    found = time_field(meta)
    if found is None or not len(live) or not windows:
        return why
    spec, tfield = found
    index = spec.fields.index(tfield)
    spans = [(tfield.unit_of(w["start_us"]), tfield.unit_of(w["end_us"] - 1)) for w in windows]
    for i, (sid, key) in enumerate(zip(live.spec_id, live.key, strict=True)):
        if sid != spec.spec_id:
            continue
        unit = key[index]
        if unit is None:
            why.iloc[i] = NULL_TIME
        elif not any(first <= unit <= last for first, last in spans):
            why.iloc[i] = OUTSIDE
    return why


def _orphans(meta: Metadata, now: int, copy: bool) -> dict[str, Any]:
    """The orphaned metadata under the table's metadata directory, or why it is not counted."""
    shared = shared_location(
        meta.location, meta.metadata_file, meta.properties.get("write.metadata.path"), copy
    )
    if shared is not None:
        return {"files": 0, "shared": shared}
    return orphaned(
        meta.listing,
        meta.manifest_lists,
        meta.all_manifests,
        now // 1000,
    )


def partitions_frame(h: Health, meta: Metadata) -> pd.DataFrame:
    """The per-partition rows to store (`day` too when the spec is one day field, for the chart)."""
    frame = h.partitions.drop(columns=["key"]).assign(state=h.state)
    spec = meta.specs.get(meta.default_spec_id)
    if (
        len(meta.specs) == 1
        and spec is not None
        and len(spec.fields) == 1
        and spec.fields[0].time_unit == "day"
    ):
        epoch = dt.date(1970, 1, 1)
        frame["day"] = [
            epoch + dt.timedelta(days=int(k[0])) if k[0] is not None else None for k in h.partitions.key
        ]
    return frame


def manifests_frame(h: Health, meta: Metadata) -> pd.DataFrame:
    """The per-manifest rows to store, bounds in human form."""
    frame = h.manifests.drop(columns=["bounds"]).assign(state=h.state)
    lower, upper = [], []
    for _, m in h.manifests.iterrows():
        spec = meta.specs.get(m.spec_id, Spec(m.spec_id, ()))
        lows = [
            f.human(b[0]) if b[0] is not None else "" for f, b in zip(spec.fields, m.bounds, strict=False)
        ]
        highs = [
            f.human(b[1]) if b[1] is not None else "" for f, b in zip(spec.fields, m.bounds, strict=False)
        ]
        lower.append("/".join(lows))
        upper.append("/".join(highs))
    frame["lower"], frame["upper"] = lower, upper
    return frame
