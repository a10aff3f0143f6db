"""The session's pinned settings, and the Iceberg metadata-cache switch reaching the catalog."""

from __future__ import annotations

import sys

import pytest

from icelab.core.config import engine_config
from icelab.core.session import register_iceberg_catalog, session_conf
from tests.conftest import namespace


@pytest.mark.parametrize("cached", [False, True])
def test_metadata_cache_switch_reaches_iceberg(ctx, compose_cfg, tiny, cached):
    """What Iceberg built from the switch, not the Spark settings read back: a CachingCatalog
    (table metadata cache) and a FileIO whose manifest cache is on, or neither."""
    engine = engine_config(compose_cfg(f"engine.iceberg_metadata_cache={str(cached).lower()}"))
    name = f"ice_cache_test_{cached}".lower()
    register_iceberg_catalog(ctx.spark, name, tiny.dataset.warehouse_uri, engine)
    ctx.spark.sql(f"SELECT * FROM {name}.bench.events LIMIT 0").collect()  # the catalog loads
    spark_catalog = ctx.spark._jsparkSession.sessionState().catalogManager().catalog(name)
    iceberg_catalog = spark_catalog.icebergCatalog().getClass().getSimpleName()
    assert iceberg_catalog == ("CachingCatalog" if cached else "HadoopCatalog")
    ident = ctx.spark._jvm.org.apache.spark.sql.connector.catalog.Identifier.of(
        namespace(ctx.spark, "bench"), "events"
    )
    io = spark_catalog.loadTable(ident).table().io()
    assert io.properties().get("io.manifest.cache-enabled") == str(cached).lower()


def test_traps_are_pinned_in_the_running_session(ctx):
    conf = ctx.spark.conf
    assert conf.get("spark.sql.iceberg.aggregate-push-down.enabled") == "false"
    assert conf.get("spark.sql.hive.filesourcePartitionFileCacheSize") == "0"
    assert conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold") == "32"


def test_java_options_come_after_icelabs_own(compose_cfg):
    engine = engine_config(compose_cfg("engine.java_options='-XX:TieredStopAtLevel=1 -Xss4m'"))
    options = session_conf(engine)["spark.driver.extraJavaOptions"].split()
    assert options[0].startswith("-Dlog4j2.configurationFile=file:")  # icelab's log config kept
    assert options[1:] == ["-XX:TieredStopAtLevel=1", "-Xss4m"]


def test_a_standalone_cluster_s_executors_log_and_run_python_as_the_driver(compose_cfg, monkeypatch):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    engine = engine_config(
        compose_cfg(
            "engine=standalone", "engine.master=null", "++engine.conf.spark.executor.extraJavaOptions=-Xss4m"
        )
    )
    conf = session_conf(engine, "spark://127.0.0.1:7077")
    assert conf["spark.master"] == "spark://127.0.0.1:7077"
    options = conf["spark.executor.extraJavaOptions"].split()
    assert options[0].startswith("-Dlog4j2.configurationFile=file:") and options[1:] == ["-Xss4m"]
    assert conf["spark.pyspark.python"] == sys.executable
