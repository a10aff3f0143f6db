"""What a measurement met on the store: the requests S3A sent, the retries it made, and the faults
the delay proxy dealt, read before and after each measurement (outside its timed sections).

A row is marked `faulted` when its measurement met a fault or S3A retried a request: its timing
then includes a retry's back-off or a stall, not only the work, so the rows that count leave it
out of medians unless `protocol.keep_faulted` keeps it.

A measurement that failed while the store does not answer met an outage (`lost`): its error row
is marked `faults=outage`, and the store is given its bounded chance to come back
(`Store.outage`) before the next measurement.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import SparkSession

from icelab.bench.measure import Measurement
from icelab.core import object_store, storage


class StoreWatch:
    """Counters of one session's store: S3A's (on `s3a://` data) and the open store's proxy."""

    def __init__(self, spark: SparkSession, data_uri: str | None) -> None:
        self.requests = storage.RequestCounts.of(spark, data_uri)
        store = object_store.active()
        self.store = store if self.requests is not None and store is not None else None

    def snapshot(self) -> tuple[dict[str, int], dict[str, int]]:
        """S3A's counters and the proxy's faults so far."""
        s3 = self.requests.snapshot() if self.requests is not None else {}
        if self.store is not None:
            self.store.longest_ms(reset=True)  # the measurement's own longest request starts here
        return s3, self.store.faults() if self.store is not None else {}

    def since(self, before: tuple[dict[str, int], dict[str, int]]) -> dict[str, Any]:
        """The row's store columns for what happened since `before`: `s3_*` requests and retries
        (data on S3A only), the faults dealt (`slowdown=1,stall=2`), `faulted`, and the delay
        proxy's longest request (`proxy_longest_ms`, when the proxy is in the path)."""
        if self.requests is None:
            return {"faulted": False}
        s3_before, faults_before = before
        row: dict[str, Any] = self.requests.since(s3_before)
        faults = self.store.faults() if self.store is not None else {}
        met = {k: n - faults_before.get(k, 0) for k, n in faults.items()}
        met = {k: n for k, n in met.items() if n}
        row["faults"] = ",".join(f"{k}={n}" for k, n in met.items()) or None
        row["faulted"] = bool(met) or bool(row.get("s3_retries"))
        row["proxy_longest_ms"] = self.store.longest_ms(reset=True) if self.store is not None else None
        return row

    def lost(self, measured: Measurement) -> bool:
        """Whether `measured` failed because the store stopped answering: asked of the store after
        any error, since the error's own line may not say so (Iceberg's `Failed to refresh the
        table` keeps the refused connection in a cause the row does not carry)."""
        return self.store is not None and measured.status == "error" and not self.store.answers()

    def outage(self, during: str) -> str:
        """The store's bounded chance to come back (`Store.outage`): the line saying how it did.

        Raises:
            RunInterrupted: it did not.
        """
        assert self.store is not None
        return self.store.outage(during)


# What an outage's error row carries beside its error: marked, and left out of medians.
OUTAGE = {"faults": "outage", "faulted": True}
