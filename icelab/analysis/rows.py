"""Which rows of a run's measurements count: the one rule every figure is computed under."""

from __future__ import annotations

import pandas as pd


def counted(measurements: pd.DataFrame, keep_faulted: bool = False) -> pd.DataFrame:
    """The rows that count: measured rounds (no warm-ups) that succeeded, and, unless
    `keep_faulted` (`protocol.keep_faulted`), that met no store fault or S3 retry: such a timing
    holds a retry's back-off or a stall, not only the work. Runs older than the `faulted` column
    count every row."""
    keep = (~measurements["warmup"].astype(bool)) & (measurements["status"] == "ok")
    if not keep_faulted and "faulted" in measurements.columns:
        keep &= ~measurements["faulted"].astype("boolean").fillna(False).astype(bool)
    return measurements[keep]
