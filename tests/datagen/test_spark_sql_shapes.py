"""The table shapes plain Spark SQL writes for the doctor's catalogues
(icelab/datagen/spark_sql_shapes.py), at the tests' sizes: each new layout is what its builder
says (manifests, data files per manifest, delete manifests), as Iceberg's own metadata tables
read it; and the sized catalogue names builders and sizes that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core.errors import UserError
from icelab.datagen import spark_sql_shapes
from icelab.experiments.doctor_catalogue import shapes_of
from tests.warehouses import own_warehouse

CATALOG = "sized_t"


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "sized", CATALOG)


def manifests(spark, name: str) -> list[tuple[int, int, int]]:  # noqa: ANN001
    """(content, data files, delete files) of each current manifest of `db.<name>`."""
    rows = spark.sql(
        "SELECT content, added_data_files_count + existing_data_files_count AS f, "
        "added_delete_files_count + existing_delete_files_count AS d "
        f"FROM {CATALOG}.db.{name}.manifests"
    ).collect()
    return sorted((r.content, r.f, r.d) for r in rows)


def test_many_files_writes_a_file_per_task_and_day_in_one_commit(ctx, warehouse):
    spark_sql_shapes.many_files(ctx.spark, CATALOG, warehouse, "many", tasks=3, days=4)
    assert manifests(ctx.spark, "many") == [(0, 12, 0)]


def test_hourly_writes_a_manifest_per_insert_spanning_every_hour(ctx, warehouse):
    spark_sql_shapes.hourly(ctx.spark, CATALOG, warehouse, "hourly", appends=2, days=1)
    assert manifests(ctx.spark, "hourly") == [(0, 24, 0), (0, 24, 0)]
    hours = ctx.spark.sql(f"SELECT count(DISTINCT partition) AS n FROM {CATALOG}.db.hourly.files").first()
    assert hours.n == 24


def test_identity_and_time_with_regions_writes_every_region_and_day(ctx, warehouse):
    spark_sql_shapes.identity_and_time(ctx.spark, CATALOG, warehouse, "regions", appends=2, days=3, regions=2)
    assert manifests(ctx.spark, "regions") == [(0, 6, 0), (0, 6, 0)]


def test_merge_on_read_appends_adds_position_delete_manifests(ctx, warehouse):
    spark_sql_shapes.merge_on_read_appends(ctx.spark, CATALOG, warehouse, "mor", appends=2, days=3, deletes=1)
    found = manifests(ctx.spark, "mor")
    assert [m for m in found if m[0] == 0] == [(0, 3, 0), (0, 3, 0)]
    deletes = [m for m in found if m[0] == 1]
    assert len(deletes) == 1 and deletes[0][2] >= 1


def test_the_sized_catalogue_names_builders_and_sizes_that_exist():
    shapes = shapes_of("foreign_sized")
    assert {s.writer for s in shapes} == {"spark-sql", "pyiceberg"} and len(shapes) == 8
    with pytest.raises(UserError, match="no such shape catalogue"):
        shapes_of("no_such_catalogue")
