"""The S3 requests each phase of a dataset's build sent through Spark's S3A client, on a store.

Counted from S3A's own counters (`RequestCounts`): the driver JVM's requests only. They are the
Iceberg commits (the arrow builder's; Spark's writers' files too with `dataset.builder=spark`),
the summary's listings and reads, and Spark's verifying readings. The arrow builder's workers
PUT their files with their own client and DuckDB reads with its own: neither is counted.

Only when Spark runs in the driver's JVM (`local[...]`): on a cluster, the executors read and
write in JVMs of their own, whose requests the driver's counters do not see, so nothing is
recorded there rather than a part.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

from icelab.core.storage import RequestCounts

# S3A's request columns and the names the record gives them. `other`: every request that is
# none of these (PUT, COPY, DELETE, multipart calls), and any retry.
KINDS = {"list": "s3_list_requests", "head": "s3_head_requests", "get": "s3_get_requests"}
TOTAL = "s3_requests"


class PhaseRequests:
    """Requests per named phase, or nothing off a store or on a cluster."""

    def __init__(self, spark: SparkSession, uri: str) -> None:
        local = spark.sparkContext.master.startswith("local")
        self._counts = RequestCounts.of(spark, uri) if local else None
        self.phases: dict[str, dict[str, int]] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Count the requests sent while the block runs, under `name`."""
        if self._counts is None:
            yield
            return
        before = self._counts.snapshot()
        yield
        sent = self._counts.since(before)
        kinds = {kind: int(sent[col] or 0) for kind, col in KINDS.items()}
        total = int(sent[TOTAL] or 0)
        self.phases[name] = {"requests": total, **kinds, "other": total - sum(kinds.values())}

    def record(self) -> dict[str, dict[str, int]] | None:
        """The phases counted, or None off a store or on a cluster."""
        return dict(self.phases) if self._counts is not None else None


def requests_line(requests: dict[str, dict[str, int]], commits: int) -> str:
    """The console's line: requests per commit while ingesting, then per verifying reading."""
    parts = []
    for name, sent in requests.items():
        kinds = ", ".join(f"{sent[k]:,} {k.upper()}" for k in (*KINDS, "other") if sent[k])
        per = f" ({sent['requests'] / commits:.1f} a commit)" if name == "ingest" and commits else ""
        parts.append(f"{name} {sent['requests']:,}{per}: {kinds or 'none'}")
    return "  S3A requests " + " | ".join(parts)
