"""A Spark standalone cluster on this machine's loopback (`engine=standalone`), started for one
run and stopped with it, whatever the ending.

The master and `engine.workers` workers are the installed PySpark's own (`bin/spark-class`), each
in a process group of its own, every port and web UI on 127.0.0.1, logs and work directories in
one cluster directory. icelab.core.supervisor launches them and stops them (and whatever they
started) at the end of the run, on Ctrl-C, SIGTERM, SIGHUP and failure: run.py's `finally`, an
atexit hook, and SIGTERM and SIGHUP handled as Ctrl-C.

A driver killed outright (kill -9, out of memory) stops nothing, and the cluster keeps running:
a state file in a per-user runtime directory records the driver and the pids and ports of what
it started, and the next cluster started, by any run, stops what a dead driver left, each
process only while it is the one recorded and its /proc/<pid>/cmdline shows the Spark master or
worker icelab started under that cluster's id.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from icelab.core import failpoints, supervisor
from icelab.core.config import EngineConfig
from icelab.core.config.values import memory_mib
from icelab.core.errors import UserError
from icelab.core.supervisor import HOST, Daemon, Supervisor, accepts, cmdline, free_port, port_taken, sweep

log = logging.getLogger(__name__)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = failpoints.WORKER_CLASS
# The checkout: icelab itself, which executors' Python imports through the editable install.
REPO = Path(__file__).resolve().parents[2]
MARK = "-Dicelab.cluster="  # on the command line of every daemon icelab starts
STATE_GLOB = "standalone-*.json"
# Run by `unshare --mount` before a worker (engine.isolate_workers): a private /tmp, with the code
# a worker runs (the checkout, the virtualenv, Spark's home) bound back into it, as an image would
# ship them, since a checkout may itself live under /tmp; then an empty tmpfs over each of the
# driver's directories named, and the worker's own work directory (its executors' logs) bound
# back where the worker expects it. Each is bound through a descriptor opened before the masks hid
# it (`mount -c`: the path is not resolved again, which would find the mask).
ISOLATE = """set -e
work=$1; repo=$2; venv=$3; spark=$4; n=$5; shift 5
exec 6<"$repo" 7<"$venv" 8<"$spark" 9<"$work"
mount -t tmpfs icelab-private-tmp /tmp
mkdir -p "$repo" "$venv" "$spark"
mount -c --bind /proc/self/fd/6 "$repo"
mount -c --bind /proc/self/fd/7 "$venv"
mount -c --bind /proc/self/fd/8 "$spark"
while [ "$n" -gt 0 ]; do mkdir -p "$1"; mount -t tmpfs icelab-not-shared "$1"; shift; n=$((n - 1)); done
mkdir -p "$work"
mount -c --bind /proc/self/fd/9 "$work"
exec 6<&- 7<&- 8<&- 9<&-
exec "$@"
"""

_running: Cluster | None = None
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy


@dataclass
class Cluster:
    """A running cluster icelab started: where it listens, what it runs, where it logs."""

    id: str
    engine: EngineConfig
    dir: Path
    state_file: InitVar[Path]
    webui_port: int
    private: tuple[Path, ...] = ()  # the driver's directories hidden from isolated workers
    url: str = ""
    daemons: Supervisor = field(init=False)

    def __post_init__(self, state_file: Path) -> None:
        self.daemons = Supervisor(
            "standalone cluster",
            state_file,
            self.dir,
            "engine.start_timeout_s",
            self.engine.start_timeout_s,
            describe=self.record,
            after_stop=lambda: _clean(self.dir),
        )

    def record(self) -> dict[str, Any]:
        """What env.json and the state file keep of it."""
        return {
            "id": self.id,
            "master": self.url,
            "workers": self.engine.workers,
            "worker_cores": self.engine.worker_cores,
            "worker_memory": self.engine.worker_memory,
            "isolated": self.isolation() if self.engine.isolate_workers else None,
            "master_webui": f"http://{HOST}:{self.webui_port}",
            "dir": str(self.dir),
            "processes": self.daemons.records(),
        }

    def isolation(self) -> dict[str, Any]:
        """What isolated workers do not see, and the mount namespace of the driver and each live
        worker (a worker sharing the driver's would see its disk)."""
        found = {"driver": mount_namespace(os.getpid())}
        found |= {d.role: mount_namespace(d.proc.pid) for d in workers(self) if supervisor.alive(d.proc.pid)}
        return {"hidden": [str(p) for p in self.private], "mount_namespaces": found}

    def status(self) -> dict[str, Any]:
        """The master's own view (`/json/`): workers, cores, memory, applications."""
        with _DIRECT.open(f"http://{HOST}:{self.webui_port}/json/", timeout=2) as answer:
            return json.load(answer)


def mount_namespace(pid: int) -> str | None:
    """The mount namespace `pid` runs in (`mnt:[4026531841]`), None when it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


# -- state files: what a killed driver left ----------------------------------------------------


def is_ours(pid: int, cluster_id: str) -> bool:
    """`pid` is a Spark master or worker icelab started for cluster `cluster_id`."""
    args = cmdline(pid)
    return f"{MARK}{cluster_id}" in args and any(c in args for c in (MASTER_CLASS, WORKER_CLASS))


def runtime_dir() -> Path:
    """This user's directory for cluster state files: $XDG_RUNTIME_DIR/icelab, else
    <tmp>/icelab-<uid>, private to the user."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    path = Path(base) / "icelab" if base else Path(tempfile.gettempdir()) / f"icelab-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.getuid():
        raise UserError(f"{path} belongs to another user; set XDG_RUNTIME_DIR to a directory of yours")
    return path


def reap(state_dir: Path) -> list[dict[str, Any]]:
    """Stop every cluster whose driver is gone; return their records (kept clusters are left)."""
    reaped = []
    for state_file in sorted(state_dir.glob(STATE_GLOB)):
        state = sweep(state_file, lambda pid, state: is_ours(pid, state["id"]))
        if state is None:
            continue  # its driver runs (its cluster is in use), or not ours
        if state["stopped"]:
            log.warning(
                "stopped standalone cluster %s left by process %s (killed?): pids %s",
                state["id"],
                state["driver"]["pid"],
                ", ".join(map(str, state["stopped"])),
            )
            reaped.append(state)
        _clean(Path(state.get("dir", "")))
    return reaped


def _clean(cluster_dir: Path) -> None:
    """Drop the bulky copies a cluster leaves (local dirs, jars fetched by executors); keep logs."""
    if not cluster_dir.is_dir():
        return
    shutil.rmtree(cluster_dir / "local", ignore_errors=True)
    for jar in cluster_dir.glob("worker-*/app-*/*/*.jar"):
        jar.unlink(missing_ok=True)


# -- ports and masters -------------------------------------------------------------------------


def master_addresses(url: str) -> list[tuple[str, int]]:
    """(host, port) of each master of `spark://h1:p1[,h2:p2]` (7077 when no port is given)."""
    found = []
    for part in url.removeprefix("spark://").split(","):
        host, _, port = part.strip().rpartition(":") if ":" in part else (part.strip(), "", "7077")
        found.append((host.strip("[]"), int(port) if port.isdigit() else -1))
    return found


def probe_master(url: str, timeout_s: float = 5.0) -> None:
    """Fail fast, before the JVM, when no master of `url` accepts a connection.

    Raises:
        UserError: naming the master and why it is unreachable.
    """
    reasons = []
    for host, port in master_addresses(url):
        if port < 0:
            raise UserError(f"engine.master={url}: bad master address; use spark://host:port")
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError as exc:
            reasons.append(f"{host}:{port} ({exc.strerror or exc})")
    raise UserError(
        f"engine.master={url}: no Spark master reachable at {', '.join(reasons)}; start it, or use "
        "engine=standalone without engine.master to let icelab start one"
    )


# -- start and stop ----------------------------------------------------------------------------


def python_exec() -> str:
    """The Python of executors' Python workers: PYSPARK_PYTHON, else this interpreter (with its
    packages; PySpark's own fallback is the first python3 on PATH)."""
    return os.environ.get("PYSPARK_PYTHON") or sys.executable


def spark_class() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home()) / "bin" / "spark-class"


def _env(cluster: Cluster) -> dict[str, str]:
    options = f"{MARK}{cluster.id} -Dspark.port.maxRetries=0 {cluster.engine.daemon_java_options}"
    return {
        **os.environ,
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_JAVA_OPTS": options.strip(),
        "SPARK_LOCAL_DIRS": str(cluster.dir / "local"),  # executors' scratch space
        "PYSPARK_PYTHON": python_exec(),
    }


def _launch(cluster: Cluster, role: str, args: list[str], work: Path | None = None) -> Daemon:
    command = [str(spark_class()), *args]
    if work is not None and cluster.engine.isolate_workers:
        work.mkdir(parents=True, exist_ok=True)
        hidden = [str(p) for p in cluster.private]
        code = [str(REPO), sys.prefix, str(spark_class().parent.parent)]
        command = ["unshare", "--mount", "sh", "-c", ISOLATE, "icelab-isolate", str(work), *code,
                   str(len(hidden)), *hidden, *command]  # fmt: skip
    return cluster.daemons.launch(role, command, cluster.dir / f"{role}.log", _env(cluster))


def check_isolation() -> None:
    """Fail fast when workers cannot get a mount namespace of their own (engine.isolate_workers).

    Raises:
        UserError: `unshare` missing, or the kernel refusing it or a mount in it (not root).
    """
    if shutil.which("unshare") is None:
        raise UserError("engine.isolate_workers=true needs unshare (util-linux), not found on PATH")
    try:
        done = subprocess.run(
            ["unshare", "--mount", "sh", "-c", "mount -t tmpfs icelab-check /tmp"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"engine.isolate_workers=true: unshare --mount failed ({exc})") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise UserError(
            f"engine.isolate_workers=true: workers cannot get a mount namespace of their own here ({why}); "
            "it needs `unshare --mount` and mount as root, or set engine.isolate_workers=false"
        )


def _alive_workers(cluster: Cluster) -> list[dict[str, Any]] | None:
    try:
        workers = [w for w in cluster.status()["workers"] if w["state"] == "ALIVE"]
    except (OSError, ValueError, KeyError):
        return None
    return workers if len(workers) >= cluster.engine.workers else None


def _ports(engine: EngineConfig) -> tuple[int, int]:
    """The master's RPC and web UI ports: the configured ones when free, else free ones."""
    ports = []
    for key in ("master_port", "master_webui_port"):
        port = getattr(engine, key)
        if port is not None and port_taken(port):
            raise UserError(
                f"engine.{key}={port}: port {port} on {HOST} is already in use; "
                f"give a free port or leave engine.{key} null (icelab picks one)"
            )
        ports.append(port)
    return tuple(port or free_port() for port in ports)  # type: ignore[return-value]


def start(engine: EngineConfig, root: Path, private: tuple[Path, ...] = ()) -> Cluster:
    """Stop what dead drivers left, then start a master and `engine.workers` workers on
    127.0.0.1 and wait until every worker is ALIVE.

    Args:
        engine: an engine=standalone config without a master.
        root: the cluster's directory goes here (logs, work and scratch directories).
        private: with engine.isolate_workers, the driver's directories the workers must not
            see (an empty directory over each, and a private /tmp).

    Raises:
        UserError: a configured port in use, a daemon that exits, or a cluster not up in time.
    """
    global _running
    state_dir = runtime_dir()
    reap(state_dir)
    master_port, webui_port = _ports(engine)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    cluster_id = f"{stamp}-{uuid.uuid4().hex[:6]}"
    cluster_dir = root / f"standalone-{cluster_id}"
    cluster_dir.mkdir(parents=True)
    cluster = Cluster(
        cluster_id, engine, cluster_dir, state_dir / f"standalone-{cluster_id}.json", webui_port, private
    )
    _running = cluster
    try:
        _launch_all(cluster, master_port)
    except BaseException:
        stop()  # what did start goes now, not at the end of the process
        raise
    log.info(
        "standalone cluster %s: %s, %d worker(s), logs in %s",
        cluster_id,
        cluster.url,
        engine.workers,
        cluster_dir,
    )
    return cluster


def _launch_all(cluster: Cluster, master_port: int) -> None:
    """Start the master, then the workers once it listens; wait until every worker is ALIVE."""
    engine = cluster.engine
    master = ["--host", HOST, "--port", str(master_port), "--webui-port", str(cluster.webui_port)]
    daemon = _launch(cluster, "master", [MASTER_CLASS, *master])
    daemon.ports = {"port": master_port, "webui_port": cluster.webui_port}
    cluster.daemons.wait("the master", lambda: accepts(master_port))
    cluster.url = f"spark://{HOST}:{master_port}"
    for i in range(1, engine.workers + 1):
        work = cluster.dir / f"worker-{i}"
        worker = [
            *("--host", HOST, "--webui-port", "0", "--work-dir", str(work)),
            *("--cores", str(engine.worker_cores), "--memory", f"{memory_mib(str(engine.worker_memory))}m"),
        ]
        _launch(cluster, f"worker-{i}", [WORKER_CLASS, *worker, cluster.url], work)
    alive_workers = cluster.daemons.wait(f"{engine.workers} ALIVE worker(s)", lambda: _alive_workers(cluster))
    webui = {w["port"]: int(w["webuiaddress"].rsplit(":", 1)[1]) for w in alive_workers}
    for daemon in cluster.daemons.daemons[1:]:
        port = _worker_port(daemon)
        daemon.ports = {"port": port, "webui_port": webui.get(port)}
    cluster.daemons.save()
    failpoints.point("cluster.started")  # the kill tests stop the driver here, or a moment later


def _worker_port(daemon: Daemon) -> int | None:
    """The RPC port a worker chose, as its log says."""
    match = re.search(r"service 'sparkWorker' on port (\d+)", daemon.log.read_text(errors="replace"))
    return int(match.group(1)) if match else None


def workers(cluster: Cluster) -> list[Daemon]:
    """Its workers' daemons, in the order they were started."""
    return [d for d in cluster.daemons.daemons if d.role.startswith("worker-")]


def running() -> Cluster | None:
    """The cluster this process started and has not stopped."""
    return _running


def stop() -> None:
    """Stop the cluster this process started (workers first), if any; keep its logs."""
    global _running
    cluster, _running = _running, None
    if cluster is not None:
        cluster.daemons.stop()
