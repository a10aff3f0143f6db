"""A verification reading packs a build's many small files into a few tasks per core, for both
tables, and leaves the session's own packing as it was."""

from __future__ import annotations

from icelab.core.session import session_settings
from icelab.datagen.build import Built
from icelab.datagen.verify import COARSE_TASKS, OPEN_COST_CONF, reading


def test_a_reading_makes_a_few_tasks_per_core_of_many_small_files(ctx, tiny: Built) -> None:
    spark = ctx.spark
    cores = spark.sparkContext.defaultParallelism
    before = spark.conf.get(OPEN_COST_CONF, None)
    for table in (tiny.dataset.iceberg_table, tiny.dataset.parquet_table):
        # Spark's own packing makes a task of every 32 files or fewer: many more than the cores.
        assert spark.table(table).rdd.getNumPartitions() > 4 * cores
        with session_settings(spark, COARSE_TASKS):
            tasks = reading(spark, table).rdd.getNumPartitions()
        assert tasks <= 2 * cores, (table, tasks)
    assert spark.conf.get(OPEN_COST_CONF, None) == before
