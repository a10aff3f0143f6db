"""The session's pinned settings, and the Iceberg metadata-cache switch reaching the catalog."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from icelab.core import run_state
from icelab.core.config import engine_config
from icelab.core.errors import UserError
from icelab.core.jvm import JVM_EXIT_GRACE_ENV, JVM_EXIT_GRACE_S, exit_grace_s
from icelab.core.session import get_session, register_iceberg_catalog, session_conf
from tests.conftest import FAST_FLAGS, namespace

REPO = Path(__file__).resolve().parents[2]


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
    assert options[1] == f"-Dicelab.spark_log={run_state.spark_log}"  # where that config writes
    assert options[2:] == ["-XX:TieredStopAtLevel=1", "-Xss4m"]


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


@pytest.mark.parametrize("isolated", [True, False])
def test_isolated_workers_fetch_shuffle_blocks_over_the_network(compose_cfg, isolated):
    """Workers in mount namespaces of their own cannot read each other's shuffle files from disk,
    though all are 127.0.0.1 (a standalone run with two of them failed on a missing .index file)."""
    isolate = f"engine.isolate_workers={str(isolated).lower()}"
    engine = engine_config(compose_cfg("engine=standalone", "engine.master=null", isolate))
    conf = session_conf(engine, "spark://127.0.0.1:7077")
    assert conf.get("spark.shuffle.readHostLocalDisk") == ("false" if isolated else None)


def test_a_second_session_in_one_process_refuses_other_jvm_settings(ctx, tiny_cfg, compose_cfg):
    """A multirun's next job shares the driver JVM: asking it for other driver flags is refused
    with the way out named, instead of measuring the first job's flags under the second's name."""
    assert get_session(engine_config(tiny_cfg)) is not None  # same settings: the same JVM serves
    other = engine_config(compose_cfg("engine.java_options='-Dicelab.test.flag=1'"))
    with pytest.raises(UserError, match=r"engine.java_options='-Dicelab.test.flag=1' needs a new driver JVM"):
        get_session(other)
    with pytest.raises(UserError, match="icelab sessions"):
        get_session(engine_config(compose_cfg("engine.driver_memory=3g")))


def test_a_driver_jvm_that_answers_nothing_is_killed_when_the_run_ends():
    """The JVM is frozen (SIGSTOP), as one stuck in full GC answers nothing: closing its stdin
    and SIGTERM do not end it, so `stop_jvm` must, and nothing of it may be left. (Without the
    SIGKILL step the child hangs and the JVM stays frozen: the test kills it and fails.)"""
    script = f"""
import os, signal
from pyspark import SparkContext
from pyspark.sql import SparkSession
from icelab.core.jvm import stop_jvm
spark = (SparkSession.builder.master("local[1]")
    .config("spark.driver.extraJavaOptions", {FAST_FLAGS!r})
    .config("spark.ui.enabled", "false").getOrCreate())
pid = SparkContext._gateway.proc.pid
print(pid, flush=True)
os.kill(pid, signal.SIGSTOP)
print(stop_jvm(grace_s=1), flush=True)
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,  # its JVM shares the group: one killpg ends both
    )
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the JVM holds the pipes open: it must go too
        out, err = proc.communicate()
    lines = out.split()
    jvm = int(lines[0]) if lines else None
    alive = jvm is not None and psutil.pid_exists(jvm)
    if alive:
        os.kill(jvm, signal.SIGKILL)  # what a broken stop_jvm left behind
    assert proc.returncode == 0, err[-2000:]
    assert lines[1:] == [str(-signal.SIGKILL)]
    assert not alive


def test_the_jvm_exit_grace_comes_from_the_environment(monkeypatch, capsys):
    """A JVM that writes at exit (the tests' class archive) gets the grace it is given; a value
    that is not a number keeps the default and says so."""
    monkeypatch.delenv(JVM_EXIT_GRACE_ENV, raising=False)
    assert exit_grace_s() == JVM_EXIT_GRACE_S == 10
    monkeypatch.setenv(JVM_EXIT_GRACE_ENV, "120")
    assert exit_grace_s() == 120
    monkeypatch.setenv(JVM_EXIT_GRACE_ENV, "two minutes")
    assert exit_grace_s() == JVM_EXIT_GRACE_S
    assert "ICELAB_JVM_EXIT_GRACE_S='two minutes' is not a number; using 10" in capsys.readouterr().err
