"""Values typed in config: time windows (`1h`, `7d`, `full`) and sizes (`8MB`)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

from pydantic import AfterValidator, Field

WINDOW_RULE = "use a positive number of hours or days (1h, 7d) or 'full'"
_UNITS = {"h": dt.timedelta(hours=1), "d": dt.timedelta(days=1)}


def window_length(name: str) -> dt.timedelta | None:
    """The length of a window name (`1h`, `7d`, `180d`); None for `full`, the data's whole span.

    Raises:
        ValueError: for anything but a positive whole number of hours or days, or `full`.
    """
    if name == "full":
        return None
    match = re.fullmatch(r"(\d+)([hd])", name)
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"bad window '{name}': {WINDOW_RULE}")
    return int(match.group(1)) * _UNITS[match.group(2)]


def _window_name(name: str) -> str:
    window_length(name)
    return name


# A window name, checked where it is typed: before any rule that compares windows.
WindowName = Annotated[str, AfterValidator(_window_name)]
# The blind check's sitting label of a run (metadata_scale, doctor_catalogue): one per session on
# a quiet machine.
SittingLabel = Annotated[
    str | None,
    Field(
        description="the sitting this run belongs to (a session on a quiet machine; the cost model's "
        "blind check counts them); null: the run's UTC date"
    ),
]


_SIZE = re.compile(r"^(\d+)\s*([kmg]?)b?$", re.I)
_UNIT = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str) -> int:
    """`8MB`, `256kb`, `1g`, `4096` -> bytes (binary units, as Iceberg's size properties).

    Raises:
        ValueError: for anything else.
    """
    match = _SIZE.fullmatch(str(text).strip())
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"bad size '{text}': use a positive number with KB, MB or GB, e.g. 8MB")
    return int(match.group(1)) * _UNIT[match.group(2).lower()]


MEMORY_RULE = "use a whole number with a unit k, m, g or t, as Spark's memory settings take (512m, 3g)"
_MEMORY = re.compile(r"(\d+)([kmgt])", re.I)
_MIB = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024**2}


def memory_mib(text: str) -> int:
    """`512m`, `3g`, `1t` -> MiB (binary units, as Spark reads its memory settings).

    A unit is required: a bare number means MiB to `spark.executor.memory` but bytes to a
    standalone worker's `--memory`.

    Raises:
        ValueError: for anything else, or for less than 1 MiB.
    """
    match = _MEMORY.fullmatch(str(text).strip())
    mib = int(int(match.group(1)) * _MIB[match.group(2).lower()]) if match else 0
    if mib < 1:
        raise ValueError(f"bad memory '{text}': {MEMORY_RULE}")
    return mib
