"""A horizon's commits drawn from a table's own history: the future a maintenance plan measures.

Each past commit after the first is a *shape*: its entries by offset from the head after it (0
at the head, -3 three units behind it). The first commit only sets the head: it has no place in
a steady ingest (it is often a backfill). The horizon's commits are these shapes drawn again with
replacement, as many as the model's commits per day of data give, spread evenly over the
horizon's units so that the head moves as the history's did.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icelab.health.ingest_model import DAYS_PER_UNIT, Commit, IngestModel


def shapes(commits: Sequence[Commit]) -> list[dict[int, int]]:
    """Each data commit but the first, as its entries by offset from the head after it."""
    head: int | None = None
    out = []
    for c in sorted((c for c in commits if c.entries), key=lambda c: c.order):
        after = max(c.units) if head is None else max(head, max(c.units))
        if head is not None:
            out.append({u - after: n for u, n in sorted(c.units.items())})
        head = after
    return out


def draw(commits: Sequence[Commit], model: IngestModel, horizon_days: float, seed: int) -> list[Commit]:
    """The commits of the next `horizon_days` of data time, after the history's head.

    Raises:
        ValueError: a horizon of no commit, or a history with no shape to draw.
    """
    past = shapes(commits)
    units = max(1, round(horizon_days / DAYS_PER_UNIT[model.unit]))
    n = round(model.commits_per_day * horizon_days)
    if n < 1 or not past:
        raise ValueError(f"no commit to draw over {horizon_days:g} days ({len(past)} shapes in the history)")
    picks = np.random.default_rng(seed).integers(0, len(past), size=n)
    last = max((c.order for c in commits), default=-1)
    drawn = []
    for j, pick in enumerate(picks):
        head = model.head_unit - (-(j + 1) * units // n)  # the j-th of n over the units, rounded up
        units_of = {head + offset: k for offset, k in past[pick].items()}
        drawn.append(Commit(order=last + 1 + j, snapshot_id=-(j + 1), units=units_of))
    return drawn
