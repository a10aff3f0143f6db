"""The one Spark session of a run, built from `conf/engine/`, and its Iceberg catalogs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

from icelab.core import locks
from icelab.core.config import EngineConfig, flatten
from icelab.core.preflight import check_java, iceberg_jar

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
LOG4J = Path(__file__).with_name("log4j2.properties")
JDO_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"

# Settings every run needs whatever the engine: results and checksums depend on them.
FIXED_CONF = {
    "spark.sql.extensions": ICEBERG_EXTENSIONS,
    # Day partitions and checksums are in UTC whatever the machine's zone.
    "spark.sql.session.timeZone": "UTC",
    # INT96 is Spark's legacy default; micros is what Iceberg writes and DuckDB reads exactly.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.ui.showConsoleProgress": "false",
}


# Settings whose values are lists: a store's jars join the Iceberg jar instead of replacing it.
LISTS = {"spark.jars": ",", "spark.driver.extraClassPath": os.pathsep}


def session_conf(engine: EngineConfig, store: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every Spark setting icelab sets, in one dict (recorded with results).

    Args:
        engine: the engine config; its `conf` overrides anything else.
        store: the object store's S3A settings and jars (icelab.core.object_store), if any.
    """
    jar = iceberg_jar(engine.iceberg_jar)
    java_options = f"-Dlog4j2.configurationFile=file:{LOG4J} {engine.java_options}".strip()
    conf = {
        "spark.master": engine.master,
        "spark.app.name": engine.app_name,
        "spark.driver.memory": engine.driver_memory,
        "spark.jars": str(jar),
        "spark.driver.extraJavaOptions": java_options,
        **FIXED_CONF,
    }
    if engine.executor_memory:
        conf["spark.executor.memory"] = engine.executor_memory
    for key, value in (store or {}).items():
        conf[key] = LISTS[key].join([conf[key], value]) if key in LISTS and conf.get(key) else value
    conf.update(flatten(engine.conf))
    return conf


def metastore_conf(conf: dict[str, str]) -> dict[str, str]:
    """Settings that keep Spark's Hive catalog from sharing one embedded Derby database.

    Embedded Derby admits one JVM per database directory; the second run would die in a Derby
    stack trace. With `catalogImplementation=hive` and no metastore service or JDBC URL given,
    each session gets a Derby database of its own in a temporary directory (icelab registers the
    Parquet table in every session anyway). A user-given embedded Derby URL is locked instead,
    so a second run waits for the first with a clear message.
    """
    if conf.get("spark.sql.catalogImplementation") != "hive" or "spark.hadoop.hive.metastore.uris" in conf:
        return {}
    url = conf.get(JDO_URL)
    if url is None:
        home = tempfile.mkdtemp(prefix="icelab-metastore-")
        java_options = conf["spark.driver.extraJavaOptions"]
        return {
            JDO_URL: f"jdbc:derby:;databaseName={home}/metastore_db;create=true",
            "spark.sql.warehouse.dir": f"{home}/warehouse",
            # derby.log goes to derby.system.home, not the working directory.
            "spark.driver.extraJavaOptions": f"{java_options} -Dderby.system.home={home}",
        }
    if url.startswith("jdbc:derby:") and not url.startswith("jdbc:derby://"):
        locks.acquire(url, f"the embedded Derby metastore {url} (one JVM at a time)", exclusive=True)
    return {}


def get_session(engine: EngineConfig, store: Mapping[str, str] | None = None) -> SparkSession:
    """Start (or reuse, within one process) the run's Spark session.

    Args:
        engine: the engine config.
        store: the object store's Spark settings (`session_conf`), if any.

    Raises:
        UserError: when Java or the Iceberg jar is missing.
    """
    check_java()
    conf = session_conf(engine, store)
    conf.update(metastore_conf(conf))
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(engine.log_level)
    return spark


def register_iceberg_catalog(
    spark: SparkSession, name: str, warehouse: str | None, engine: EngineConfig
) -> None:
    """Register an Iceberg catalog at runtime (catalogs load lazily by name).

    One catalog per dataset lets one session hold several datasets, as a multirun needs.
    `warehouse` may be None for a Hive or REST catalog, which knows its own.
    """
    prefix = f"spark.sql.catalog.{name}"
    settings = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": engine.catalog_type,
        # Off by default: a fresh reader pays for metadata.json and every manifest.
        f"{prefix}.cache-enabled": str(engine.iceberg_metadata_cache).lower(),
        f"{prefix}.io.manifest.cache-enabled": str(engine.iceberg_metadata_cache).lower(),
    }
    if warehouse:
        settings[f"{prefix}.warehouse"] = warehouse
    if engine.catalog_uri:
        settings[f"{prefix}.uri"] = engine.catalog_uri
    for key, value in settings.items():
        spark.conf.set(key, value)
