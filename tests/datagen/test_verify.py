"""A verification reading packs a build's many small files into a few tasks per core, for both
tables, and leaves the session's own packing as it was."""

from __future__ import annotations

from icelab.datagen.build import Built
from icelab.datagen.verify import OPEN_COST_CONF, coarse_tasks, reading


def test_a_reading_makes_a_few_tasks_per_core_of_many_small_files(ctx, tiny: Built) -> None:
    spark = ctx.spark
    cores = spark.sparkContext.defaultParallelism
    before = spark.conf.get(OPEN_COST_CONF, None)
    for table in (tiny.dataset.iceberg_table, tiny.dataset.parquet_table):
        # Spark's own packing makes a task of every 32 files or fewer: many more than the cores.
        assert spark.table(table).rdd.getNumPartitions() > 4 * cores
        with coarse_tasks(spark):
            tasks = reading(spark, table).rdd.getNumPartitions()
        assert tasks <= 2 * cores, (table, tasks)
    assert spark.conf.get(OPEN_COST_CONF, None) == before
