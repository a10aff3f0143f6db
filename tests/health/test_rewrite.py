"""The rewrite the doctor simulates (Iceberg's RewriteManifestsSparkAction: n = ceil(bytes /
target) runs by partition, a partition never split, a manifest rolled at 1.2 x target), the floor
of a target, and the wording of counts."""

from __future__ import annotations

import pandas as pd

from icelab.core.units import plural
from icelab.health.advice import FLOOR, floor_bytes
from icelab.health.rewrite import Sizes, simulate, sizes
from tests.health.test_forecast import DAYS, FIRST_DAY, MANIFESTS, PER_DAY, ingested


def test_the_rewrite_cuts_runs_of_whole_partitions_in_their_order():
    meta = ingested()  # 6 manifests of 120 KB, each spanning all 20 days, 36 entries a day
    sim = simulate(meta, 128 * 1024)
    assert sim.changes and sim.tasks == 6  # ceil(720,000 / 131,072)
    days = [m.bounds[0][:2] for m in sim.rewritten.itertuples()]
    assert days[0][0] == FIRST_DAY and days[-1][1] == FIRST_DAY + DAYS - 1
    assert all(a[1] < b[0] for a, b in zip(days, days[1:], strict=False))  # disjoint, in day order
    assert int(sim.rewritten.entries.sum()) == DAYS * PER_DAY
    # Each manifest: the table's fixed part plus its entries at the table's bytes per entry.
    model = sim.sizes
    assert list(sim.rewritten.length) == [round(model.of(e)) for e in sim.rewritten.entries]


def test_a_rewrite_iceberg_would_skip_changes_nothing():
    meta = ingested()
    one = meta.manifests.iloc[:1].assign(length=10_000)
    meta.manifests = one
    sim = simulate(meta, 64 * 1024)
    assert not sim.changes and sim.tasks == 1 and len(sim.rewritten) == 1


def test_a_smaller_target_asks_for_more_manifests_each_within_the_roll_limit():
    meta = ingested()
    # Bytes per entry 939 (above the 7,324-byte fixed part): at 64 KB, 11 runs of ~65 entries,
    # each below 1.2 x 64 KB, so no run rolls over.
    sim = simulate(meta, 64 * 1024)
    assert sim.tasks == 11
    assert all(length <= 1.2 * 64 * 1024 for length in sim.rewritten.length)


def test_the_size_line_and_the_floor():
    data = pd.DataFrame({"entries": [1, 101], "deleted_entries": [0, 0], "length": [7324, 9441]})
    line = sizes(data)
    assert round(line.overhead) == 7303 and round(line.per_entry, 2) == 21.17
    assert floor_bytes(Sizes(7324, 21)) == FLOOR == 64 * 1024
    assert floor_bytes(Sizes(9681, 21)) == 128 * 1024  # a wide schema's header raises it
    same = pd.DataFrame({"entries": [120] * MANIFESTS, "deleted_entries": 0, "length": 120_000})
    assert sizes(same).overhead == 7324  # entry counts all equal: the one-entry manifest's size


def test_counts_are_worded_as_a_user_reads_them():
    assert [plural(1, "day"), plural(7, "day"), plural(1.5, "day"), plural(1200, "manifest")] == [
        "1 day",
        "7 days",
        "1.5 days",
        "1,200 manifests",
    ]
