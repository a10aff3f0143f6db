"""What a built dataset looks like: rows, files, bytes, partitions, manifests, and how many
day partitions each as-ingested manifest spans (the skew the study starts from)."""

from __future__ import annotations

import datetime as dt
import statistics

from pyspark.sql import SparkSession

from icelab.core.storage import Storage
from icelab.datagen.dataset import Dataset

EPOCH = dt.date(1970, 1, 1)


def bound_day(bound: str) -> dt.date:
    """Day of a manifest partition bound ('2026-01-02', or '2026-01-02-10' for hours)."""
    return dt.date.fromisoformat(bound[:10])


def partition_day(value: object) -> dt.date:
    """A partition value as its day (days() gives a date, hours() hours since epoch)."""
    return value if isinstance(value, dt.date) else EPOCH + dt.timedelta(hours=int(value))


def day_partitions(spark: SparkSession, dataset: Dataset) -> list[dt.date]:
    """The table's day partitions, from Iceberg's `partitions` metadata table (no data read).

    Hour partitions (hours since epoch) are folded into their days.
    """
    rows = spark.sql(f"SELECT partition AS p FROM {dataset.iceberg_table}.partitions").collect()
    return sorted({partition_day(r.p[0]) for r in rows})


def manifest_spans(spark: SparkSession, dataset: Dataset, days: list[dt.date]) -> list[float]:
    """Per data manifest of the current snapshot: share of the table's day partitions that
    lie within its partition bounds (what planning must consider it for)."""
    # Whole column: Iceberg cannot project part of the summaries' element struct.
    rows = spark.sql(
        f"SELECT partition_summaries AS ps FROM {dataset.iceberg_table}.manifests WHERE content = 0"
    ).collect()
    spans = []
    for r in rows:
        bounds = r.ps[0]
        if bounds.lower_bound is None:
            continue
        lo, hi = bound_day(bounds.lower_bound), bound_day(bounds.upper_bound)
        spans.append(sum(1 for d in days if lo <= d <= hi) / len(days))
    return spans


def summarize(spark: SparkSession, dataset: Dataset) -> dict[str, object]:
    """Figures of both tables, read from the files and Iceberg's metadata tables."""
    t = dataset.iceberg_table
    pq_files = Storage(spark).list_files(dataset.parquet_uri, ".parquet")
    ice = spark.sql(
        f"SELECT count(*) AS files, coalesce(sum(file_size_in_bytes), 0) AS bytes, "
        f"coalesce(sum(record_count), 0) AS rows FROM {t}.files"
    ).first()
    man = spark.sql(f"SELECT count(*) AS n, coalesce(sum(length), 0) AS bytes FROM {t}.manifests").first()
    snapshots = spark.sql(f"SELECT count(*) AS n FROM {t}.snapshots").first().n
    days = day_partitions(spark, dataset)
    spans = manifest_spans(spark, dataset, days)
    return {
        "rows": int(ice.rows),
        "day_partitions": len(days),
        "parquet": {
            "files": len(pq_files),
            "bytes": sum(f.size for f in pq_files),
            "directories": len({f.path.rsplit("/", 1)[0] for f in pq_files}),
        },
        "iceberg": {
            "files": int(ice.files),
            "bytes": int(ice.bytes),
            "snapshots": int(snapshots),
            "manifests": int(man.n),
            "manifest_bytes": int(man.bytes),
            "manifest_span_median": statistics.median(spans) if spans else None,
            "manifest_span_min": min(spans) if spans else None,
            "manifest_span_max": max(spans) if spans else None,
        },
    }
