"""The manifest layout a rewrite should give, and the target size that gives it.

A rewritten manifest should cover about UNITS_PER_MANIFEST units of the time field a window
filters on (all values of the other fields together), which is where the planning experiments at
medium found narrow windows cheapest (docs/planning.md: 128 KB and 256 KB manifests of 1 and 1.8
days). Its bytes are then the fixed part plus that many units' live entries at the bytes each
entry takes when a rewrite writes it (`manifest_bytes.written_sizes`), kept between the floor and
Iceberg's default of 8 MiB. The layout is the number of manifests that holds the live entries so.

Iceberg asks for n = ceil(bytes of the manifests rewritten / target) manifests, counting the bytes
as they are now: headers of small manifests and deleted entries included. So the target that gives
the layout is those bytes over the number of manifests meant, not the size of one manifest meant.
Sized so, one rewrite gives the layout, and the doctor run again on its result computes the same
layout from the same live entries: it is a fixed point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from icelab.core.units import plural
from icelab.health.rewrite import Sizes

MAX_TARGET = 8 * 1024 * 1024  # Iceberg's default target
# The floor of a manifest's bytes: at least FLOOR, and FLOOR_HEADERS x the table's fixed manifest
# bytes, so that a manifest is at most an eighth header (7.3 kB of 64 KiB for three columns).
FLOOR, FLOOR_HEADERS = 64 * 1024, 8
UNITS_PER_MANIFEST = 1.5


def floor_bytes(sizes: Sizes) -> int:
    """The smallest manifest advised: FLOOR_HEADERS x the fixed manifest bytes, up to a power of
    two, at least FLOOR. Below it a manifest is mostly its header."""
    need = FLOOR_HEADERS * max(sizes.overhead, 1.0)
    return min(MAX_TARGET, max(FLOOR, 1 << math.ceil(math.log2(need))))


def binary_text(n: float) -> str:
    """Bytes in binary units, labelled so, with the exact count: `64 KiB (65,536 bytes)`."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            value = n / scale
            shown = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
            return f"{shown} {unit} ({int(n):,} bytes)"
    return f"{int(n):,} bytes"


@dataclass(frozen=True)
class Layout:
    """The layout meant, and the target that gives it.

    Attributes:
        manifests: the manifests meant.
        manifest_bytes: the bytes of each (fixed part included).
        target: the value of commit.manifest.target-size-bytes for the rewrite.
        reason: how they were reached, in one line.
    """

    manifests: int
    manifest_bytes: int
    target: int
    reason: str


def layout(
    live_entries: int,
    per_unit_median: float,
    unit: str,
    written: Sizes,
    input_bytes: int,
    floor: int,
) -> Layout | None:
    """The layout meant for `live_entries` live entries (`per_unit_median` per `unit`) written at
    `written`'s bytes, and the target that makes Iceberg ask for it from manifests of
    `input_bytes` in all; None without live entries."""
    if live_entries <= 0 or per_unit_median <= 0 or input_bytes <= 0:
        return None
    wanted = written.overhead + UNITS_PER_MANIFEST * per_unit_median * written.per_entry
    each = min(MAX_TARGET, max(floor, wanted))
    per_manifest = max(1.0, (each - written.overhead) / written.per_entry)
    manifests = max(1, math.ceil(live_entries / per_manifest))
    target = max(1, math.ceil(input_bytes / manifests))
    reason = (
        f"{per_unit_median:g} live {'entry' if per_unit_median == 1 else 'entries'} per {unit} (median) at "
        f"{written.per_entry:.0f} bytes each as a rewrite writes them (+ {written.overhead / 1000:.1f} kB "
        f"per manifest): {UNITS_PER_MANIFEST} {unit}s a manifest is {wanted / 1000:.1f} kB, kept within "
        f"{binary_text(floor)} (the floor) .. {binary_text(MAX_TARGET)}; {live_entries:,} live "
        f"{'entry' if live_entries == 1 else 'entries'} "
        f"make {plural(manifests, 'such manifest')}, and the {input_bytes / 1000:,.1f} kB rewritten over "
        f"{manifests} is the target"
    )
    return Layout(manifests, round(each), target, reason)
