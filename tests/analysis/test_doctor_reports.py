"""A doctor run's statistics are compared with manifest_health's to 12 significant digits, and a
statistic the doctor does not give counts as different."""

from __future__ import annotations

from icelab.analysis.doctor_reports import equal


def test_statistics_equal_to_twelve_digits_count_as_same():
    theirs = {"span": {"min": 1.0, "median": 0.5}, "entries": {"max": 200.0}}
    mine = {"span": {"min": 1.0 + 1e-13, "median": 0.5}, "entries": {"max": 200.0}}
    assert equal(mine, theirs) == (3, 3)
    mine["span"]["median"] = 0.5 + 1e-9
    assert equal(mine, theirs) == (2, 3)


def test_a_statistic_the_doctor_does_not_give_is_not_the_same():
    assert equal({"span": {"min": 1.0}}, {"span": {"min": 1.0}, "entries": {"max": 2.0}}) == (1, 2)
