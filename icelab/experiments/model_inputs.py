"""The planning cost model's inputs for each state, layout and window of a metadata_scale run,
read from each table's own metadata as the doctor reads it (icelab.health.reader, then
`check.spans_read` over the query's exact time span). The held-out check of the model
(docs/costmodel-check.md) predicts from these, not from the scan's own metrics, so a prediction
needs nothing but the table; a run's model_inputs.csv holds one row per cell.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyspark.sql import SparkSession

from icelab.bench.windows import Window
from icelab.core.iceberg import load_table
from icelab.datagen.metadata.state import MetaState
from icelab.health.check import spans_read
from icelab.health.forecast import window_reads
from icelab.health.reader import read
from icelab.health.source import Source

FILE = "model_inputs.csv"
_EPOCH = dt.datetime(1970, 1, 1)


def micros(instant: dt.datetime) -> int:
    """A window bound (naive, UTC) in microseconds since the epoch, as Iceberg's timestamps."""
    return (instant.replace(tzinfo=None) - _EPOCH) // dt.timedelta(microseconds=1)


def state_inputs(spark: SparkSession, state: MetaState, windows: list[Window]) -> list[dict[str, Any]]:
    """One row per layout and window: dataset, profile, window, the model's inputs
    (`forecast.READS`), the delete manifests among them, and the partitions the span touches."""
    spans = [(w.name, micros(w.start), micros(w.end)) for w in windows]
    rows = []
    for layout_name in state.layouts:
        name = state.table(layout_name)
        source = Source(
            given=name,
            kind="hadoop",
            catalog=state.catalog,
            ident=f"bench.{layout_name}",
            location=state.table_uri(layout_name),
            warehouse=state.warehouse_uri,
        )
        meta = read(spark, source, load_table(spark, name))
        for found in spans_read(meta, spans):
            if found is None:  # no time field: no window prunes it
                continue
            rows.append(
                {
                    "dataset": state.label,
                    "profile": layout_name,
                    "window": found["window"],
                    **window_reads(found),
                    "delete_manifests": found["delete_manifests"],
                    "units": found["units"],
                }
            )
    return rows
