"""icelab.health.ingest_model: the ingest model fitted on a known history gives back the history's
rates, lateness, deletes and merge settings, in any input order; too short a history is one
message (no Spark)."""

from __future__ import annotations

import random

import pytest

from icelab.health.ingest_model import MERGE_DEFAULTS, Commit, Spread, TooShort, fit

DAYS, PER_DAY, ENTRIES, LATE = 30, 4, 10, 2
SIX_HOURS_US = 6 * 3_600_000_000


def known_history() -> list[Commit]:
    """30 days of data, 4 commits a day of 10 entries to their day, one commit in six 6 hours
    apart. On even days the day's last commit also adds 2 entries to the day before (late by one
    day); three commits add delete files only (5 entries each)."""
    commits = []
    for i in range(DAYS * PER_DAY):
        day, nth = divmod(i, PER_DAY)
        units = {day: ENTRIES}
        if nth == PER_DAY - 1 and day % 2 == 0 and day > 0:
            units[day - 1] = LATE
        commits.append(Commit(order=i, snapshot_id=1000 + i, units=units, committed_us=i * SIX_HOURS_US))
    deletes = [Commit(order=500 + k, snapshot_id=9000 + k, units={}, delete_entries=5) for k in range(3)]
    return commits + deletes


def test_the_fit_gives_back_the_known_history() -> None:
    model = fit(known_history(), "day", {"commit.manifest-merge.enabled": "false"})
    late_commits = len([d for d in range(1, DAYS) if d % 2 == 0])
    assert model.commits == DAYS * PER_DAY and model.data_days == DAYS
    assert model.commits_per_day == pytest.approx(PER_DAY)
    assert model.commits_per_wall_day == pytest.approx(PER_DAY)
    assert model.entries_per_commit.median == ENTRIES and model.entries_per_commit.max == ENTRIES + LATE
    assert model.units_per_commit.median == 1 and model.units_per_commit.max == 2
    total = DAYS * PER_DAY * ENTRIES + late_commits * LATE
    assert model.late_share == pytest.approx(late_commits * LATE / total)
    assert model.late_lag_units == Spread(1.0, 1.0, 1.0)
    assert (model.delete_commits, model.delete_entries_per_commit) == (3, 5.0)
    assert not model.merging
    assert model.merge_defaults == [k for k in MERGE_DEFAULTS if k != "commit.manifest-merge.enabled"]
    text = model.text()
    assert "120 commits that added data over 30.0 days of data time (day partitions)" in text
    assert "4.00 per day of data; 4.00 per day of commit time" in text
    assert "min-count-to-merge=100 (default)" in text and "manifest-merge.enabled=false," in text


def test_the_order_of_the_commits_given_does_not_move_the_fit() -> None:
    history = known_history()
    shuffled = random.Random(7).sample(history, len(history))
    assert fit(shuffled, "day", {}) == fit(history, "day", {})


def test_a_commit_spreading_over_days_ahead_of_the_head_is_not_late() -> None:
    """A backfill's first commit over ten days, then one commit a day: nothing lands behind."""
    history = [Commit(0, 1, {d: 3 for d in range(10)})] + [Commit(d, 1 + d, {9 + d: 3}) for d in range(1, 6)]
    model = fit(history, "day", {})
    assert model.late_share == 0 and model.late_lag_units is None
    assert model.units_per_commit.max == 10 and "late data     none" in model.text()


def test_hours_are_counted_as_days_of_data() -> None:
    history = [Commit(h, h, {h: 1}) for h in range(48)]
    model = fit(history, "hour", {})
    assert model.data_days == pytest.approx(2.0) and model.commits_per_day == pytest.approx(24.0)
    assert model.commits_per_wall_day is None and model.timed_commits == 0


@pytest.mark.parametrize(
    ("history", "said"),
    [
        ([Commit(0, 1, {5: 10})], "1 commit that added data, over 1 day of data, the head 0 days past"),
        ([Commit(0, 1, {5: 10}), Commit(1, 2, {5: 4})], "2 commits that added data, over 1 day of data"),
        ([Commit(0, 1, {}, delete_entries=3)], "0 commits that added data, over 0 days of data"),
        # A backfill, then a commit inside its days: no steady ingest to count commits over yet.
        ([Commit(0, 1, dict.fromkeys(range(10), 1)), Commit(1, 2, {5: 1})], "10 days of data, the head 0"),
    ],
)
def test_too_short_a_history_is_one_message(history: list[Commit], said: str) -> None:
    with pytest.raises(TooShort, match="too little history to fit: .*" + said):
        fit(history, "day", {})


def test_a_backfill_does_not_dilute_the_commits_per_day() -> None:
    """Sixty days loaded at once, then one commit a day for ten days: one a day."""
    daily = [Commit(d, 1 + d, {59 + d: 2}) for d in range(1, 11)]
    history = [Commit(0, 1, dict.fromkeys(range(60), 2)), *daily]
    model = fit(history, "day", {})
    assert model.commits_per_day == pytest.approx(1.0) and model.data_days == 70
