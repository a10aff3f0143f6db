"""The session's pinned settings, and the Iceberg metadata-cache switch reaching the catalog."""

from __future__ import annotations

import pytest

from icelab.core.config import engine_config
from icelab.core.session import register_iceberg_catalog


@pytest.mark.parametrize("cached", [False, True])
def test_metadata_cache_switch_sets_both_iceberg_caches(ctx, compose_cfg, tmp_path, cached):
    engine = engine_config(compose_cfg(f"engine.iceberg_metadata_cache={str(cached).lower()}"))
    name = f"ice_cache_test_{cached}".lower()
    register_iceberg_catalog(ctx.spark, name, str(tmp_path), engine)
    conf = ctx.spark.conf
    assert conf.get(f"spark.sql.catalog.{name}.cache-enabled") == str(cached).lower()
    assert conf.get(f"spark.sql.catalog.{name}.io.manifest.cache-enabled") == str(cached).lower()


def test_traps_are_pinned_in_the_running_session(ctx):
    conf = ctx.spark.conf
    assert conf.get("spark.sql.iceberg.aggregate-push-down.enabled") == "false"
    assert conf.get("spark.sql.hive.filesourcePartitionFileCacheSize") == "0"
    assert conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold") == "32"
