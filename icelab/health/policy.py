"""The manifest-health policy: statistics against thresholds, the worst level reached, and why.

Shared by `experiment=manifest_health` and `icelab doctor`, so one table gets one verdict
whichever of them looks at it. The default rules are those of conf/experiment/manifest_health.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from icelab.core.config import Threshold

LEVELS = ("healthy", "rewrite advised", "rewrite needed")


@dataclass
class Judged:
    """One table state, the frames its statistics came from, and its verdict (`judge`)."""

    state: str
    table: str
    partitions: pd.DataFrame
    manifests: pd.DataFrame
    stats: dict[str, dict[str, float]]
    verdict: str
    reasons: list[str]


def judge(stats: dict[str, dict[str, float]], rules: dict[str, Threshold]) -> tuple[str, list[str]]:
    """The worst level any rule reaches, and every rule that tripped, as a reason."""
    level, reasons = 0, []
    for key, threshold in rules.items():
        source, stat = key.split("_", 1)
        value = stats[source][stat]
        hit = 2 if value > threshold.need else 1 if value > threshold.advise else 0
        if hit:
            reasons.append(
                f"{key} = {value:.2f} > {threshold.need if hit == 2 else threshold.advise:g} ({LEVELS[hit]})"
            )
        level = max(level, hit)
    return LEVELS[level], reasons
