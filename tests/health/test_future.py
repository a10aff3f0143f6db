"""icelab.health.future: the horizon's commits are the history's shapes drawn again, placed so
the head moves as the history's did (no Spark)."""

from __future__ import annotations

import pytest

from icelab.health.future import draw, shapes
from icelab.health.ingest_model import Commit, fit

# A first commit over 10 days (a backfill), then two commits a day: one at the head, and every
# other day one that adds the head and 2 entries a day behind it.
HISTORY = [Commit(0, 1, {d: 5 for d in range(10)})] + [
    Commit(i, 1 + i, {9 + (i + 1) // 2: 3} | ({9 + (i + 1) // 2 - 1: 2} if i % 4 == 0 else {}))
    for i in range(1, 41)
]


def test_a_shape_is_a_commits_entries_by_offset_from_the_head_and_the_first_commit_has_none() -> None:
    found = shapes(HISTORY)
    assert len(found) == 40 and {0: 3} in found and {-1: 2, 0: 3} in found
    assert all(len(s) <= 2 for s in found)  # the backfill's ten days are not drawn again


def test_the_horizon_has_the_models_commits_spread_over_its_days_from_the_head_on() -> None:
    model = fit(HISTORY, "day", {})
    drawn = draw(HISTORY, model, horizon_days=30, seed=3)
    assert len(drawn) == round(model.commits_per_day * 30)
    heads = [max(c.units) for c in drawn]
    assert heads == sorted(heads) and heads[0] > model.head_unit and heads[-1] == model.head_unit + 30
    past = shapes(HISTORY)
    assert all({u - max(c.units): n for u, n in c.units.items()} in past for c in drawn)
    assert [c.order for c in drawn] == list(range(41, 41 + len(drawn)))
    assert draw(HISTORY, model, 30, seed=3) == drawn and draw(HISTORY, model, 30, seed=4) != drawn


def test_a_horizon_with_no_commit_is_refused() -> None:
    model = fit(HISTORY, "day", {})
    with pytest.raises(ValueError, match="no commit to draw over 0 days"):
        draw(HISTORY, model, horizon_days=0, seed=1)
