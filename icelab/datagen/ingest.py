"""Ingestion as commits: each batch is written once to Parquet (an append of new files in
`date=` directories) and once to Iceberg (one append snapshot), from the same cached rows."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import ArrayType, DataType, MapType, StructField, StructType
from tqdm import tqdm

from icelab.core import failpoints
from icelab.datagen.dataset import Dataset
from icelab.datagen.generate import generate_batch, partition_columns

# Defaults icelab sets on the Iceberg table; dataset.iceberg_properties may override them.
BASE_TABLE_PROPERTIES = {
    "format-version": "2",
    # Rows arrive already clustered by partition (below); a second shuffle would only cost.
    "write.distribution-mode": "none",
}


@dataclass
class IngestTimes:
    """Seconds spent per step, summed over batches."""

    generate_s: float = 0.0
    parquet_s: float = 0.0
    iceberg_s: float = 0.0
    rows: int = 0
    per_batch: list[dict[str, float]] = field(default_factory=list)
    workers: int = 0  # processes that generated and wrote side by side (the arrow builder); 0: Spark
    wall_s: float = 0.0  # the ingest's wall time, when the steps overlap (workers)
    commit_s: float = 0.0  # of iceberg_s: the Iceberg commits in the driver (the arrow builder)

    @property
    def total_s(self) -> float:
        """Generation plus both writes."""
        return self.generate_s + self.parquet_s + self.iceberg_s


def _nullable(dtype: DataType) -> DataType:
    """The same type with every field nullable (Iceberg 'optional')."""
    if isinstance(dtype, StructType):
        return StructType([StructField(f.name, _nullable(f.dataType), True) for f in dtype])
    if isinstance(dtype, ArrayType):
        return ArrayType(_nullable(dtype.elementType), True)
    if isinstance(dtype, MapType):
        return MapType(_nullable(dtype.keyType), _nullable(dtype.valueType), True)
    return dtype


def table_properties(dataset: Dataset) -> dict[str, str]:
    """Every Iceberg table property icelab sets at creation (recorded with the dataset)."""
    return {
        **BASE_TABLE_PROPERTIES,
        "write.parquet.compression-codec": dataset.config.compression,
        **dataset.config.iceberg_properties,
    }


def create_iceberg_table(
    spark: SparkSession,
    dataset: Dataset,
    schema: StructType,
    table: str | None = None,
    partitioned_by: str | None = None,
) -> None:
    """CREATE the empty Iceberg table (the dataset's, or `table` in its catalog), partitioned by
    days (or hours) of `timestamp`, or by `partitioned_by` (Spark SQL's PARTITIONED BY list)."""
    ddl = spark._jvm.org.apache.spark.sql.types.DataType.fromJson(_nullable(schema).json()).toDDL()
    transform = "hours" if dataset.config.partitioning == "hour" else "days"
    partitioned_by = partitioned_by or f"{transform}(timestamp)"
    props = ", ".join(f"'{k}' = '{v}'" for k, v in table_properties(dataset).items())
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {dataset.catalog}.bench")
    spark.sql(
        f"CREATE TABLE {table or dataset.iceberg_table} ({ddl}) USING iceberg "
        f"PARTITIONED BY ({partitioned_by}) TBLPROPERTIES ({props})"
    )


def clustered(df: DataFrame, parts: list[str]) -> DataFrame:
    """One task per partition value: exactly one file per partition per commit in both
    formats, whatever the parallelism, so the layout is part of the spec."""
    return df.repartition(*parts).sortWithinPartitions(*parts)


def ingest(spark: SparkSession, dataset: Dataset, progress: bool = True) -> IngestTimes:
    """Write every batch to both tables; the Iceberg table must not exist yet."""
    ds = dataset.config
    parts = partition_columns(ds)
    times = IngestTimes()
    bar = tqdm(range(ds.commits), desc=f"ingest {ds.name}", unit="commit", disable=not progress)
    for batch in bar:
        df = clustered(generate_batch(spark, ds, batch), parts).persist(StorageLevel.MEMORY_AND_DISK)
        t0 = time.perf_counter()
        rows = df.count()  # materializes the cache: generation is timed on its own
        t1 = time.perf_counter()
        if batch == 0:
            create_iceberg_table(spark, dataset, df.schema)
        (
            df.write.mode("append")
            .partitionBy(*parts)
            .option("compression", ds.compression)
            .parquet(dataset.parquet_uri)
        )
        t2 = time.perf_counter()
        failpoints.point("ingest.iceberg_append")  # the kill tests stop here, or inside the append
        df.writeTo(dataset.iceberg_table).append()
        t3 = time.perf_counter()
        df.unpersist()
        step = {"generate_s": t1 - t0, "parquet_s": t2 - t1, "iceberg_s": t3 - t2}
        times.per_batch.append({"batch": batch, "rows": rows, **step})
        times.generate_s += step["generate_s"]
        times.parquet_s += step["parquet_s"]
        times.iceberg_s += step["iceberg_s"]
        times.rows += rows
        bar.set_postfix(rows=times.rows, refresh=False)
    return times
