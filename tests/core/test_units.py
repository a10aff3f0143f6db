"""icelab.core.units: each spelling a page prints, and a missing value as `-`."""

import math

import pytest

from icelab.core import units


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (units.num(1354.4), "1,354"),
        (units.num(0.414, 2), "0.41"),
        (units.num(math.nan), "-"),
        (units.ratio(2.434), "2.43x"),
        (units.ratio(1.041, None), "1.04x"),
        (units.ratio(47.33, None), "47.3x"),
        (units.ratio(133.2, None), "133x"),
        (units.ratio(None), "-"),
        (units.interval((0.814, 1.136)), " [0.81, 1.14]"),
        (units.interval((0.814, 1.136), lead=""), "[0.81, 1.14]"),
        (units.interval(None), ""),
        (units.pct(0.3), "30%"),
        (units.size(1_995_400_000), "1,995.4 MB"),
        (units.size(12_700, "kB"), "12.7 kB"),
        (units.size(25_500_000, label=False), "25.5"),
        (units.size(None), "-"),
        (units.ms(553), "553 ms"),
        (units.ms(19_500), "19.5 s"),
        (units.ms_span(305, 551), "305 to 551 ms"),
        (units.ms_span(10_100, 7_100), "10.1 to 7.1 s"),
        (units.minutes(7.84), "7.8"),
        (units.minutes(24.4), "24"),
        (units.minutes(24.66, 1, label=True), "24.7 min"),
        (units.days(1.0), "1 day"),
        (units.days(3.66), "3.7 days"),
        (units.days(45.2), "45 days"),
        (units.signed(-103.2), "-103"),
        (units.spelled(3), "three"),
        (units.spelled(12), "12"),
        (units.spread([24.2, 30.1]), "24 to 30 ms"),
        (units.change(-0.268), "-27%"),
        (units.change(-0.003), "-0.3%"),
        (units.spread([3.66, 3.7], 1, " days"), "3.7 days"),
    ],
)
def test_spelling(text: str, expected: str) -> None:
    assert text == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(36_000, "36k"), (200_000, "200k"), (1_000_000, "1M"), (10_000_000, "10M"), (1_500_000, "1.5M")]
    + [(950, "950")],
)
def test_short_count(value: int, expected: str) -> None:
    assert units.short_count(value) == expected
