"""When events happen and when they arrive: the batch timeline behind the ingest skew.

Batch b of B arrives at day (b+1) * span/B. Its rows are mostly recent (event time inside
its own interval), plus a late tail over older days (lag squared-uniform, up to
late_max_days), plus a small clock-skew share stamped anywhere in the span, as events from
devices with wrong clocks are. The late tail and the clock skew are what make every
as-ingested manifest cover many day partitions, the layout the Adobe study starts from.
"""

from __future__ import annotations

import datetime as dt
import math

from icelab.core.config import DatasetConfig
from icelab.datagen.draws import Draws

DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000

# Relative traffic per UTC hour: a trough before dawn, a peak in the evening.
_HOUR_WEIGHTS = [1 + 0.85 * math.sin(math.pi * (h - 9) / 12) for h in range(24)]
_HOUR_TABLE_SIZE = 240


def hour_table() -> list[int]:
    """Hours repeated in proportion to their weight: an inverse-CDF lookup table."""
    total = sum(_HOUR_WEIGHTS)
    table: list[int] = []
    for hour, weight in enumerate(_HOUR_WEIGHTS):
        table += [hour] * round(_HOUR_TABLE_SIZE * weight / total)
    return table


def start_micros(ds: DatasetConfig) -> int:
    """First instant of the data (UTC micros since epoch)."""
    start = dt.datetime.combine(ds.end, dt.time(), dt.timezone.utc) - dt.timedelta(days=ds.span_days)
    return int(start.timestamp()) * 1_000_000


def batch_sql(ds: DatasetConfig) -> str:
    """The batch (commit) a row id belongs to: floor(id * commits / rows)."""
    return f"(id * {ds.commits} div {ds.total_rows})"


def batch_rows(ds: DatasetConfig, batch: int) -> tuple[int, int]:
    """Row id range [lo, hi) of one batch, the inverse of `batch_sql`."""

    def first_id(b: int) -> int:
        return -(-b * ds.total_rows // ds.commits)  # ceil(b * rows / commits)

    return first_id(batch), first_id(batch + 1)


def day_position_sql(ds: DatasetConfig, draws: Draws) -> str:
    """Event day (float days since start) of a row, from its batch's place in time."""
    interval = ds.span_days / ds.commits
    recent_lo = f"({batch_sql(ds)} * {interval!r})"
    depth = f"least({float(ds.late_max_days)!r}, {recent_lo})"
    kind = draws.u("arrival.kind")
    t = draws.u("arrival.t")
    skew, late = ds.clock_skew_fraction, ds.clock_skew_fraction + ds.late_fraction
    return (
        f"CASE WHEN {kind} < {skew!r} THEN {t} * {ds.span_days}"
        f" WHEN {kind} < {late!r} THEN {recent_lo} - {depth} * pow({t}, 2)"
        f" ELSE {recent_lo} + {t} * {interval!r} END"
    )


def timestamp_sql(ds: DatasetConfig, draws: Draws) -> str:
    """Event timestamp: the day from the timeline, the hour from the daily cycle."""
    day = f"least(greatest(cast(floor({day_position_sql(ds, draws)}) as bigint), 0), {ds.span_days - 1})"
    table = hour_table()
    hour = f"element_at(array({', '.join(map(str, table))}), {draws.index('time.hour', len(table))} + 1)"
    within = f"cast(floor({draws.u('time.within_hour')} * {HOUR_US}) as bigint)"
    return f"timestamp_micros({start_micros(ds)} + {day} * {DAY_US} + {hour} * {HOUR_US} + {within})"
