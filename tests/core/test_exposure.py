"""Nothing the harness starts listens beyond this machine: every listening socket of the Python
process and its JVM is on loopback, and the Spark UI is off in every engine config."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from icelab.core.config import engine_config
from icelab.core.session import session_conf
from tests.conftest import FAST_JVM

REPO = Path(__file__).resolve().parents[2]


def listening(pid: int) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every listening TCP socket of `pid` and its descendants."""
    root = psutil.Process(pid)
    found = []
    for proc in [root, *root.children(recursive=True)]:
        try:
            conns, name = proc.net_connections(kind="tcp"), proc.name()
        except psutil.NoSuchProcess:
            if proc is root:
                raise
            continue  # a child that ended after it was listed (a Python worker, a shell) listens nowhere
        found += [(name, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return found


def public(sockets: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The sockets reachable from other machines (bound to anything but loopback)."""
    exposed = []
    for sock in sockets:
        ip = ipaddress.ip_address(sock[1].split("%")[0])
        mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback too
        if not (ip.is_loopback or (mapped is not None and mapped.is_loopback)):
            exposed.append(sock)
    return exposed


def test_the_check_sees_a_public_socket():
    # The check must be able to fail: a socket on every interface is reported.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert ("0.0.0.0", port) in [(ip, p) for _, ip, p in public(listening(os.getpid()))]


def test_the_test_session_listens_on_loopback_only(ctx):
    # A job with a shuffle starts the block manager's transfers and Python workers too.
    ctx.spark.range(1000).repartition(4).selectExpr("id % 3 AS k").groupBy("k").count().collect()
    sockets = listening(os.getpid())
    assert any(name == "java" for name, _, _ in sockets), sockets  # the JVM was looked at
    assert public(sockets) == []


SESSIONS = """
import json, sys
from hydra import compose, initialize_config_dir
from icelab.core.config import engine_config
from icelab.core.session import get_session

for overrides in json.loads(sys.argv[2]):
    with initialize_config_dir(config_dir=sys.argv[1], version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    spark = get_session(engine_config(cfg))
    spark.range(1000).repartition(4).selectExpr("id % 3 AS k").groupBy("k").count().collect()
    print("ready", flush=True)
    sys.stdin.readline()
    spark.stop()
"""


@pytest.fixture(scope="module")
def session_sockets() -> dict[str, list[tuple[str, str, int]]]:
    """The listening sockets of Spark sessions started as `python run.py <overrides>` starts them
    (the composed config, `get_session`), after one shuffle job each: one process, one session
    after another (a new SparkContext in the same JVM takes the new UI setting)."""
    local = ["engine=local", *FAST_JVM]  # the suite's JVM flags: they open and bind nothing
    sessions = {"default": local, "ui_on": [*local, "++engine.conf.spark.ui.enabled=true"]}
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}  # the config alone decides
    proc = subprocess.Popen(
        [sys.executable, "-c", SESSIONS, str(REPO / "conf"), json.dumps(list(sessions.values()))],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    found = {}
    try:
        for name in sessions:
            assert proc.stdout.readline().strip() == "ready"
            found[name] = listening(proc.pid)
            proc.stdin.write("\n")
            proc.stdin.flush()
    finally:
        proc.communicate(timeout=120)
    assert proc.returncode == 0
    for sockets in found.values():
        assert any(name == "java" for name, _, _ in sockets), sockets
    return found


def test_a_default_local_session_listens_on_loopback_only(session_sockets):
    assert public(session_sockets["default"]) == []


def test_a_session_with_the_ui_on_is_caught(session_sockets):
    # What the default guards against: the UI listens on every interface, whatever bindAddress says.
    exposed = public(session_sockets["ui_on"])
    assert [name for name, _, _ in exposed] == ["java"]  # the UI: port 4040, or the next free one


@pytest.mark.parametrize("engine", ["local", "cluster", "standalone"])
def test_the_spark_ui_is_off_in_every_engine(compose_cfg, engine):
    # The shrunk tests' master (local[2]) is no standalone master: standalone starts its own.
    conf = session_conf(
        engine_config(compose_cfg(f"engine={engine}", *["engine.master=null"] * (engine == "standalone")))
    )
    assert conf["spark.ui.enabled"] == "false"
    if engine != "cluster":  # the standalone cluster's own ports: tests/core/test_cluster.py
        assert conf["spark.driver.bindAddress"] == "127.0.0.1"
