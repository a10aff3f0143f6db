"""Which rows of a run's measurements count: the one rule every figure is computed under."""

from __future__ import annotations

import pandas as pd


def counted(measurements: pd.DataFrame) -> pd.DataFrame:
    """The rows that count: measured rounds (no warm-ups) that succeeded."""
    return measurements[(~measurements["warmup"].astype(bool)) & (measurements["status"] == "ok")]
