"""Numbers as the docs, charts and commands print them: counts, ratios, shares, sizes, durations.

One function per kind of quantity; where two places print the same quantity differently (a size
with or without its unit, minutes to one decimal or adaptive), the difference is a parameter, so
a reader finds every spelling of a size or a duration here. A missing value (None or NaN) prints
as `-` wherever a table cell can be empty.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MISSING = "-"
# Decimal units, as the datagen summary and the stores report sizes.
SIZE_UNITS = {"kB": 1e3, "MB": 1e6, "GB": 1e9}
WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def missing(value: float | None) -> bool:
    """True for None and NaN: a cell with no figure."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def num(value: float | None, digits: int = 0) -> str:
    """A count or a measure with thousands separators: `1,354`, `0.41` (with digits); `-` if missing."""
    return MISSING if missing(value) else f"{value:,.{digits}f}"


def short_count(value: float) -> str:
    """A large count in a title, to two significant digits with a k or M suffix: `36k`, `200k`,
    `1M`, `10M`, `1.5M`; below a thousand as `num`."""
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            text = f"{float(f'{value / scale:.2g}'):g}"
            return f"{text}{unit}"
    return num(value)


def signed(value: float) -> str:
    """A difference with its sign: `+5`, `-103`."""
    return f"{value:+,.0f}"


def spelled(n: int) -> str:
    """A small count inside a sentence: `no`, `one` ... `nine`, then digits (`12`, `1,200`)."""
    return WORDS[n] if 0 <= n < len(WORDS) else f"{n:,}"


def plural(n: float, noun: str) -> str:
    """A count and its noun, singular only for exactly one: `1 day`, `7 days`, `1.5 days`,
    `1,200 manifests`."""
    text = f"{int(n):,}" if float(n).is_integer() else f"{n:,}"
    return f"{text} {noun}" + ("" if n == 1 else "s")


def ratio(value: float | None, digits: int | None = 2) -> str:
    """A ratio: `2.43x` (`digits` decimals), or with digits=None to three significant digits
    (`1.04x`, `47.3x`, `133x`); `-` if missing."""
    if missing(value):
        return MISSING
    if digits is None:
        digits = 2 if value < 10 else 1 if value < 100 else 0
    return f"{value:.{digits}f}x"


def interval(bounds: tuple[float, float] | None, lead: str = " ") -> str:
    """An interval's bounds to two decimals after `lead`: ` [0.81, 1.14]`; empty when there is none."""
    return "" if bounds is None else f"{lead}[{bounds[0]:.2f}, {bounds[1]:.2f}]"


def pct(value: float | None, digits: int = 0) -> str:
    """A fraction as a share: `30%`; `-` if missing."""
    return MISSING if missing(value) else f"{value:.{digits}%}"


def size(nbytes: float | None, unit: str = "MB", digits: int = 1, label: bool = True) -> str:
    """Bytes in a decimal unit: `1,995.4 MB`, `12.7 kB`, or without the unit (`25.5`) where a
    table's header names it; `-` if missing."""
    if missing(nbytes):
        return MISSING
    text = num(nbytes / SIZE_UNITS[unit], digits)
    return f"{text} {unit}" if label else text


def ms(value: float) -> str:
    """A duration given in milliseconds: `553 ms`, `1,807 ms`; from 10 s on in seconds, `19.5 s`."""
    return f"{value / 1000:.1f} s" if value >= 10_000 else f"{num(value)} ms"


def ms_span(a: float, b: float) -> str:
    """Two durations in milliseconds, in one unit: `305 to 551 ms`, `10.1 to 7.1 s` (seconds from 1 s on)."""
    if max(a, b) >= 1000:
        return f"{a / 1000:.1f} to {b / 1000:.1f} s"
    return f"{num(a)} to {num(b)} ms"


def minutes(value: float, digits: int | None = None, label: bool = False) -> str:
    """A duration in minutes: `24.7`, or with digits=None one decimal below 10 and none from 10 on
    (`7.8`, `24`); with label, `24.7 min`."""
    if digits is None:
        digits = 1 if value < 10 else 0
    text = f"{value:.{digits}f}"
    return f"{text} min" if label else text


def days(value: float) -> str:
    """A number of days to two significant digits: `45 days`, `3.7 days`, `1 day`."""
    text = f"{value:.0f}" if value >= 9.95 else f"{value:.1f}".removesuffix(".0")
    return f"{text} day" + ("" if text == "1" else "s")


def spread(values: Iterable[float], digits: int = 0, unit: str = " ms") -> str:
    """The range of `values`: `24 to 30 ms`, or `24 ms` when both ends round alike."""
    values = list(values)
    low, high = num(min(values), digits), num(max(values), digits)
    return f"{low}{unit}" if low == high else f"{low} to {high}{unit}"


def change(value: float) -> str:
    """A relative change with its sign: `-27%`, `+13%`; below 10% with a decimal, `-0.3%`."""
    return f"{value:+.1%}" if abs(value) < 0.095 else f"{value:+.0%}"
