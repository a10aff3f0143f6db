"""The one Spark session of a run, built from `conf/engine/`, and its Iceberg catalogs."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from icelab.core import cluster, locks, run_state
from icelab.core.config import EngineConfig, flatten
from icelab.core.errors import UserError
from icelab.core.jvm import jvm_running, stop_jvm
from icelab.core.preflight import check_java, iceberg_jar

ICEBERG_EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
LOG4J = Path(__file__).with_name("log4j2.properties")  # the driver's: to a file (run_state.spark_log)
LOG4J_EXECUTOR = Path(__file__).with_name("log4j2-executor.properties")  # to the worker's stderr file
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


# What PySpark fixes when it launches the driver JVM, once per process: a later session in the
# same process (a multirun's next job) keeps the first one's, whatever its config says.
JVM_SETTINGS = ("engine.java_options", "engine.driver_memory", "spark.driver.extraClassPath", "spark.jars")
_launched: dict[str, str] | None = None
# The Derby metastores `metastore_conf` made in this process: deleted at its exit.
_metastores: list[str] = []


def jvm_settings(engine: EngineConfig, conf: Mapping[str, str]) -> dict[str, str]:
    """The launch-time settings a session asks for (JVM_SETTINGS), as strings."""
    return {
        "engine.java_options": engine.java_options,
        "engine.driver_memory": engine.driver_memory,
        "spark.driver.extraClassPath": conf.get("spark.driver.extraClassPath", ""),
        "spark.jars": conf.get("spark.jars", ""),
    }


def check_same_jvm(wanted: Mapping[str, str]) -> None:
    """Refuse a session whose launch-time settings differ from this process's running JVM.

    Raises:
        UserError: naming the first differing setting; each setting needs its own process.
    """
    if _launched is None:
        return
    for key in JVM_SETTINGS:
        if wanted[key] != _launched[key]:
            raise UserError(
                f"{key}={wanted[key]!r} needs a new driver JVM, and this process's was started with "
                f"{_launched[key]!r} (a multirun runs its jobs in one process): run each value as its "
                "own command, or `icelab sessions` for A B A B sessions"
            )


# Settings whose values are lists: a store's jars join the Iceberg jar instead of replacing it.
LISTS = {"spark.jars": ",", "spark.driver.extraClassPath": os.pathsep}


def session_conf(
    engine: EngineConfig, master: str | None = None, store: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every Spark setting icelab sets, in one dict (recorded with results).

    Args:
        engine: the engine config; its `conf` overrides anything else.
        master: the URL of the cluster icelab started (engine=standalone), else engine.master.
        store: the object store's S3A settings and jars (icelab.core.object_store), if any.
    """
    jar = iceberg_jar(engine.iceberg_jar)
    log = f"-Dicelab.spark_log={run_state.spark_log}"
    java_options = f"-Dlog4j2.configurationFile=file:{LOG4J} {log} {engine.java_options}".strip()
    conf = {
        "spark.master": master or engine.master or "(started by icelab)",
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
    if engine.starts_cluster:
        # Executors are JVMs of their own on this machine: their Python is the driver's, and
        # they log as quietly (Spark's INFO would fill the cluster's log directory); flags
        # given in engine.conf come after, so theirs win.
        conf["spark.pyspark.python"] = cluster.python_exec()
        given = conf.get("spark.executor.extraJavaOptions", "")
        conf["spark.executor.extraJavaOptions"] = (
            f"-Dlog4j2.configurationFile=file:{LOG4J_EXECUTOR} {given}".strip()
        )
    if engine.isolate_workers:
        # Every worker is 127.0.0.1, so an executor would read another's shuffle files straight from
        # "its" disk; each sits in a mount namespace of its own, as on hosts of their own, so
        # shuffle blocks must come over the network (engine.conf may still set it).
        conf.setdefault("spark.shuffle.readHostLocalDisk", "false")
    return conf


@contextmanager
def session_settings(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set runtime SQL settings within the block, then restore what was there before."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        # A measurement past its timeout may have ended the JVM: nothing left to restore.
        for key, value in before.items() if jvm_running() else ():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def metastore_conf(conf: dict[str, str]) -> dict[str, str]:
    """Settings that keep Spark's Hive catalog from sharing one embedded Derby database.

    Embedded Derby admits one JVM per database directory; the second run would die in a Derby
    stack trace. With `catalogImplementation=hive` and no metastore service or JDBC URL given,
    each session gets a Derby database of its own in a temporary directory, deleted when the
    process exits (icelab registers the Parquet table in every session anyway). A user-given
    embedded Derby URL is locked instead, so a second run waits for the first with a clear message.
    """
    if conf.get("spark.sql.catalogImplementation") != "hive" or "spark.hadoop.hive.metastore.uris" in conf:
        return {}
    url = conf.get(JDO_URL)
    if url is None:
        home = tempfile.mkdtemp(prefix="icelab-metastore-")
        if not _metastores:
            atexit.register(remove_metastores)
        _metastores.append(home)
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


def remove_metastores() -> None:
    """Delete the Derby metastores `metastore_conf` made in this process, after its driver JVM.

    Registered with atexit when the first is made: each held about 4 MB and outlived its run. (A
    process killed outright leaves its own, as it leaves Spark's temporary directories.)
    """
    if _metastores:
        stop_jvm()  # Derby writes to its database until the JVM holding it is gone
    while _metastores:
        shutil.rmtree(_metastores.pop(), ignore_errors=True)


def get_session(
    engine: EngineConfig,
    cluster_root: Path | None = None,
    store: Mapping[str, str] | None = None,
    private: tuple[Path, ...] = (),
) -> SparkSession:
    """Start (or reuse, within one process) the run's Spark session.

    With engine=standalone and no master, a standalone cluster is started first (its directory
    under `cluster_root`, by default the per-user runtime directory) and the session waits for
    its executors; a spark:// master is probed before the JVM starts. `store` is the object
    store's Spark settings (`session_conf`), if any. `private`: the driver's directories that
    isolated workers must not see (engine.isolate_workers).

    Raises:
        UserError: when Java or the Iceberg jar is missing, a spark:// master is unreachable, or
            a standalone cluster cannot start or gives no executors in time.
    """
    check_java()
    master = engine.master
    if master is not None and master.startswith("spark://"):
        cluster.probe_master(master)
    if engine.starts_cluster:
        running = cluster.running()
        if running is None or running.engine != engine:
            cluster.stop()
            running = cluster.start(engine, cluster_root or cluster.runtime_dir(), private)
        master = running.url
        # PySpark takes its workers' Python from the environment, not from spark.pyspark.python.
        os.environ["PYSPARK_PYTHON"] = cluster.python_exec()
    run_state.spark_log.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    conf = session_conf(engine, master, store)
    wanted = jvm_settings(engine, conf)
    check_same_jvm(wanted)
    conf.update(metastore_conf(conf))
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    global _launched
    if _launched is None:
        _launched = wanted
    spark.sparkContext.setLogLevel(engine.log_level)
    if engine.standalone:
        wait_for_executors(spark, engine.workers if engine.starts_cluster else 1, engine.start_timeout_s)
    return spark


def executors(spark: SparkSession) -> list[dict[str, Any]]:
    """The session's executors (not the driver): id, host:port, cores, memory for storage (0
    until the executor's block manager has registered)."""
    found = []
    summaries = spark.sparkContext._jsc.sc().statusStore().executorList(True)
    for i in range(summaries.size()):
        e = summaries.apply(i)
        if e.id() != "driver":
            found.append(
                {
                    "id": e.id(),
                    "host_port": e.hostPort(),
                    "cores": e.totalCores(),
                    "max_memory": e.maxMemory(),
                }
            )
    return found


def wait_for_executors(spark: SparkSession, count: int, timeout_s: float) -> None:
    """Wait until `count` executors have registered with the session.

    Raises:
        UserError: when they have not after `timeout_s`.
    """
    deadline = time.monotonic() + timeout_s
    while (have := sum(e["max_memory"] > 0 for e in executors(spark))) < count:
        if time.monotonic() > deadline:
            master = spark.sparkContext.master
            spark.stop()
            raise UserError(
                f"{master}: {have} of {count} executors registered after {timeout_s:g} s "
                "(engine.start_timeout_s); do its workers have the free cores and engine.executor_memory?"
            )
        time.sleep(0.2)


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
