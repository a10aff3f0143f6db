"""engine=standalone: the Spark standalone cluster icelab starts on loopback, through `python run.py`.

Three runs of the micro smoke benchmark serve the run tests (the module fixture `runs`): a
local-mode run, which builds the dataset and gives the answers to match; a standalone run whose
driver SIGKILLs itself once its cluster is up (tests/reliability.py: ICELAB_KILL_AT), which must
leave the master and worker running; the next standalone run, which must stop them, run on the
workers' executors, answer as local mode did, and leave nothing behind. The clusters' state
files go to a temporary XDG_RUNTIME_DIR, so no other run's cluster is touched.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pyarrow.parquet as pq
import pytest

from icelab.core import cluster, supervisor
from icelab.core.contract import validate
from icelab.core.errors import UserError
from tests.cli_batch import run_batch
from tests.conftest import FAST_FLAGS
from tests.core.test_cli import assert_one_line_error
from tests.core.test_exposure import listening, public
from tests.core.test_object_store import carrying
from tests.reliability import REPO, TRACES, command, run, smoke_runs, with_data

# The smallest cluster: one worker, one core; its daemons and executors start fast like the
# driver (MICRO's flags, the tests' class archive included).
STANDALONE = [
    "engine=standalone",
    "engine.master=null",
    "engine.worker_cores=1",
    "engine.worker_memory=1g",
    f"engine.daemon_java_options='{FAST_FLAGS}'",
    f"++engine.conf.spark.executor.extraJavaOptions='{FAST_FLAGS}'",
]
MESSAGES = {
    "test_unreachable_master": "engine.master=spark://127.0.0.1:{port}: no Spark master reachable at "
    "127.0.0.1:{port} (Connection refused); start it, or use engine=standalone without engine.master to let "
    "icelab start one",
    "test_master_port_taken": "engine.master_port={port}: port {port} on 127.0.0.1 is already in use; give a "
    "free port or leave engine.master_port null (icelab picks one)",
}


@dataclass
class Runs:
    killed: subprocess.CompletedProcess
    left: dict[str, Any]  # the killed run's state file
    left_alive: dict[int, list[str]]  # its daemons still running after the kill: pid -> cmdline
    left_sockets: list[tuple[str, str, int]]
    standalone: subprocess.CompletedProcess
    standalone_dir: Path
    local: subprocess.CompletedProcess
    local_dir: Path
    state_dir: Path


def ours_running(cluster_id: str) -> list[int]:
    """Every process whose command line carries the cluster's mark."""
    return [
        p.pid for p in psutil.process_iter() if f"{cluster.MARK}{cluster_id}" in supervisor.cmdline(p.pid)
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, micro_data: Path) -> Runs:
    tmp = with_data(tmp_path_factory.mktemp("standalone"), micro_data)
    state_dir = tmp / "runtime" / "icelab"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("XDG_RUNTIME_DIR", str(tmp / "runtime"))
        local = run(tmp)
        local_dir = smoke_runs(tmp)[-1]
        killed = run(tmp, *STANDALONE, kill_at="cluster.started")
        (state_file,) = state_dir.glob(cluster.STATE_GLOB)
        left = json.loads(state_file.read_text())
        alive = {
            p["pid"]: supervisor.cmdline(p["pid"]) for p in left["processes"] if supervisor.alive(p["pid"])
        }
        sockets = [s for pid in alive for s in listening(pid)]
        standalone = run(tmp, *STANDALONE)
    return Runs(killed, left, alive, sockets, standalone, smoke_runs(tmp)[-1], local, local_dir, state_dir)


def test_a_killed_driver_leaves_its_cluster_and_the_next_run_stops_it(runs):
    assert runs.killed.returncode == -9, runs.killed.stderr[-3000:]
    # Left running: the master and the worker, on loopback only (RPC ports and web UIs).
    roles = [p["role"] for p in runs.left["processes"]]
    assert roles == ["master", "worker-1"]
    assert sorted(runs.left_alive) == sorted(p["pid"] for p in runs.left["processes"])
    for args in runs.left_alive.values():
        assert f"{cluster.MARK}{runs.left['id']}" in args
    assert len(runs.left_sockets) == 4 and public(runs.left_sockets) == [], runs.left_sockets
    # The next run stopped them, said so, and went on.
    assert runs.standalone.returncode == 0, runs.standalone.stderr[-3000:]
    assert f"stopped standalone cluster {runs.left['id']} left by process" in runs.standalone.stdout
    assert not any(supervisor.alive(pid) for pid in runs.left_alive)
    assert ours_running(runs.left["id"]) == []


def test_a_standalone_run_runs_on_the_workers_and_leaves_nothing(runs):
    assert runs.standalone.returncode == 0, runs.standalone.stderr[-3000:]
    assert validate(runs.standalone_dir) == []
    engine = json.loads((runs.standalone_dir / "env.json").read_text())["engine"]
    started = engine["cluster"]
    assert engine["kind"] == "standalone (started by icelab)"
    assert engine["master"] == started["master"] == f"spark://127.0.0.1:{started['processes'][0]['port']}"
    assert (started["workers"], started["worker_cores"], started["worker_memory"]) == (1, 1, "1g")
    # Executors ran in the worker's JVMs, not the driver's: one registered from 127.0.0.1, and
    # the worker's work directory holds its application's executor log.
    assert [e["host_port"].split(":")[0] for e in engine["executors"]] == ["127.0.0.1"]
    (executor,) = Path(started["dir"]).glob("worker-1/app-*/0")
    assert (executor / "stderr").is_file()  # its log, as quiet as the driver's (icelab's log4j2)
    assert not list(Path(started["dir"]).glob("worker-1/app-*/0/*.jar"))  # the fetched jars are dropped
    # Nothing left: no process of the cluster, no listening port, no state file.
    pids = [p["pid"] for p in started["processes"]]
    assert not any(supervisor.alive(pid) for pid in pids)
    assert ours_running(started["id"]) == []
    ports = {port for p in started["processes"] for key, port in p.items() if key.endswith("port")}
    assert len(ports) == 4
    listen = {c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    assert ports & listen == set()
    assert list(runs.state_dir.glob(cluster.STATE_GLOB)) == []


def test_standalone_answers_equal_local_modes(runs):
    assert runs.local.returncode == 0, runs.local.stderr[-3000:]
    standalone, local = (
        json.loads((d / "answers.json").read_text()) for d in (runs.standalone_dir, runs.local_dir)
    )
    meta = [json.loads((d / "run.json").read_text()) for d in (runs.standalone_dir, runs.local_dir)]
    assert meta[0]["dataset"] == meta[1]["dataset"]
    assert json.loads((runs.local_dir / "env.json").read_text())["engine"]["kind"] == "local"
    pick = [{k: a[k] for k in ("query_id", "window", "checksums")} for a in standalone]
    assert pick == [{k: a[k] for k in ("query_id", "window", "checksums")} for a in local]
    assert len(pick) == 4 and all(a["agree"] for a in standalone)


def paths(tmp: Path) -> list[str]:
    return [f"paths.data_dir={tmp}/data", f"paths.results_dir={tmp}/results"]


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess, Any]]:
    """The three bad-input runs below, each failing before a JVM starts, in one interpreter
    (tests/cli_batch.py), each with its own arguments and environment: its outcome and the port
    or directory its message names, by test name. One process: three took 8.6 s, now 3.8 s."""
    tmp = {name: tmp_path_factory.mktemp(name) for name in ("unreachable", "port_taken", "isolated")}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        taken = sock.getsockname()[1]
        with socket.socket() as free:  # a port nobody listens on
            free.bind(("127.0.0.1", 0))
            unreachable = free.getsockname()[1]
        cases = {
            "test_unreachable_master": (
                [
                    "engine=standalone",
                    f"engine.master=spark://127.0.0.1:{unreachable}",
                    *paths(tmp["unreachable"]),
                ],
                {},
                unreachable,
            ),
            "test_master_port_taken": (
                ["engine=standalone", f"engine.master_port={taken}", *paths(tmp["port_taken"])],
                {"XDG_RUNTIME_DIR": str(tmp["port_taken"])},
                taken,
            ),
            "test_isolated_workers_with_local_data_fail_at_preflight": (
                [*STANDALONE, "engine.isolate_workers=true", *paths(tmp["isolated"])],
                {},
                tmp["isolated"],
            ),
        }
        outcomes = run_batch([{"args": args, "env": env} for args, env, _ in cases.values()])
    return {name: (proc, named) for (name, (_, _, named)), proc in zip(cases.items(), outcomes, strict=True)}


def test_unreachable_master(refused):
    proc, port = refused["test_unreachable_master"]
    assert_one_line_error(proc, MESSAGES["test_unreachable_master"].format(port=port))


def test_master_port_taken(refused):
    proc, port = refused["test_master_port_taken"]
    assert_one_line_error(proc, MESSAGES["test_master_port_taken"].format(port=port))


def test_isolated_workers_with_local_data_fail_at_preflight(refused):
    proc, tmp_path = refused["test_isolated_workers_with_local_data_fail_at_preflight"]
    assert_one_line_error(
        proc,
        "engine.isolate_workers=true: the workers share no disk with the driver, so they cannot read "
        f"paths.data_dir={tmp_path}/data on its local disk; put the data on shared storage (storage=object)",
    )


# Workers die mid-run, in one run of two workers and two executed rounds
# (`ICELAB_KILL_AT=protocol.measurement:2,10@worker`: the last live worker and its executor get
# SIGKILL after the 2nd and the 10th measurement). After the first loss one worker is left: the
# first round finishes on it and the measurement that lost the worker is marked. After the
# second none is left: the run ends interrupted. The run is bounded: one that waits for an
# executor forever (no worker left, nothing cancelling its job) is ended here and fails below.
LOSS_RUN_S = 300
LOSS = ["engine.workers=2", "protocol.executions=2"]


@pytest.fixture(scope="module")
def loss(tmp_path_factory: pytest.TempPathFactory, micro_data: Path) -> dict[str, Any]:
    """The run that loses its workers: outcome, run directory, its icelab lines, its cluster's
    state directory, and the processes still carrying its mark in their environment afterwards."""
    tmp = with_data(tmp_path_factory.mktemp("worker-loss"), micro_data)
    mark = f"icelab-worker-loss-{os.getpid()}"
    env = os.environ | {
        "ICELAB_KILL_AT": "protocol.measurement:2,10@worker",
        "ICELAB_TEST_MARK": mark,
        "XDG_RUNTIME_DIR": str(tmp / "runtime"),
    }
    t0 = time.monotonic()
    try:
        args = command(tmp, *STANDALONE, *LOSS)
        proc = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=LOSS_RUN_S)
        code, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, stderr = None, str(exc.stderr)
    said = [line for line in stderr.splitlines() if line.startswith("icelab:")]
    print(f"worker loss: exit {code} after {time.monotonic() - t0:.0f} s", *said, sep="\n  ")
    found = smoke_runs(tmp)
    return {
        "code": code,
        "stderr": stderr,
        "said": said,
        "run": found[-1] if found else None,
        "state_dir": tmp / "runtime" / "icelab",
        "left": carrying(mark),
    }


def worker_lost(rows: pd.DataFrame) -> list[bool]:
    return ["worker_lost" in str(f) for f in rows["faults"]]


def only_outliers_besides(rows: pd.DataFrame) -> bool:
    """Every other marked row is the outlier rule's: the run stopped early, and the rule ran on
    the rows it kept (a cold cluster's first plans can be three times the next round's)."""
    others = rows[rows["faulted"] & ~pd.Series(worker_lost(rows), index=rows.index)]
    return set(others["faults"]) <= {"outlier"}


def test_a_worker_lost_with_a_survivor_lets_the_round_finish_and_marks_the_row(loss):
    assert loss["said"], loss["stderr"][-3000:]
    assert re.fullmatch(
        r"icelab: the standalone cluster lost 1 of its 2 worker\(s\) during \S+ \S+ \S+; 1 left, Spark "
        r"rescheduled its tasks, the row is marked faulted",
        loss["said"][0],
    ), loss["said"][0]
    rows = pq.read_table(loss["run"] / "measurements.parquet").to_pandas()
    first = rows[rows["repetition"] == 0]
    assert len(first) == 8 and (first["status"] == "ok").all()  # the whole round, on the worker left
    # The measurement after the kill is the one that lost the worker; it alone is marked so.
    assert worker_lost(first) == [False, False, True, *[False] * 5]
    assert first["faults"].tolist()[2] == "worker_lost=1"
    assert only_outliers_besides(first)


def test_the_last_worker_lost_ends_the_run_interrupted_with_its_rows(loss):
    assert loss["code"] == 3, loss["stderr"][-3000:]
    assert not TRACES.search(loss["stderr"]) and len(loss["said"]) == 2, loss["stderr"][-3000:]
    assert re.fullmatch(
        r"icelab: the standalone cluster lost 1 of its 2 worker\(s\) during \S+ \S+ \S+; no worker left to "
        r"finish the run; run interrupted, 11 rows kept in \S+",
        loss["said"][1],
    ), loss["said"][1]
    rows = pq.read_table(loss["run"] / "measurements.parquet").to_pandas()
    assert worker_lost(rows) == [False, False, True, *[False] * 7, True]
    assert rows["faults"].tolist()[-1] == "worker_lost=1"
    assert only_outliers_besides(rows)
    record = json.loads((loss["run"] / "run.json").read_text())
    assert (record["status"], record["rows"]) == ("interrupted", 11)
    assert "no worker left" in record["ended"]
    # Nothing left running (no driver JVM, master or worker) and no state file: the next run
    # finds nothing of this one to stop.
    started = json.loads((loss["run"] / "env.json").read_text())["engine"]["cluster"]
    assert loss["left"] == [] and ours_running(started["id"]) == []
    assert list(loss["state_dir"].glob(cluster.STATE_GLOB)) == []


def test_isolation_without_unshare_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match=r"^engine.isolate_workers=true needs unshare \(util-linux\)"):
        cluster.check_isolation()


def test_isolation_the_kernel_refuses_is_one_line(tmp_path, monkeypatch):
    # What unshare says without the right to a mount namespace (not root, or a locked-down container).
    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    with pytest.raises(UserError) as err:
        cluster.check_isolation()
    assert str(err.value) == (
        "engine.isolate_workers=true: workers cannot get a mount namespace of their own here (unshare: "
        "unshare failed: Operation not permitted); it needs `unshare --mount` and mount as root, or set "
        "engine.isolate_workers=false"
    )
