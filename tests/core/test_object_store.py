"""`storage=object` for real: Ceph RGW started on loopback, Spark through S3A, DuckDB through
httpfs, the delay proxy in between, and nothing left running afterwards.

Two `python run.py` of the micro smoke benchmark run side by side, one on the object store (with
latency, so through the proxy) and one on local disk; their answers must match. Then the store
alone (no Spark) is started in a child process and ended by SIGINT, SIGTERM and SIGKILL, and,
while it is up, bad input is tried against it. The proxy, the S3 probe, the pid sweep and the
config checks are tested without Ceph. Tests that need Ceph's programs or the S3A jars skip
without them, except in CI (CI=true), which installs both: there they fail.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pyarrow.parquet as pq
import pytest
from omegaconf import OmegaConf

from icelab.core import locks, object_store, storage, supervisor
from icelab.core.config import StorageConfig
from icelab.core.contract import validate
from icelab.core.errors import UserError
from icelab.core.object_store import RGW_ACCESS_KEY, RGW_SECRET_KEY, rgw
from icelab.core.object_store.proxy import DelayProxy, RequestCounter, path_kind
from icelab.tools.contract import main as contract_main
from tests.conftest import start_run_py as run_py
from tests.core.test_exposure import listening, public
from tests.reliability import MICRO, PLANNED, TRACES

REPO = Path(__file__).resolve().parents[2]
LATENCY_MS = 4  # small: the build sends some 1,700 requests, each paying it
# A share of the store's requests answered 503 SlowDown by the proxy: S3A retries them, the run
# completes with the same answers, and the measurements that met one are marked.
SLOWDOWN = ["storage.faults.slowdown_rate=0.02", "storage.faults.seed=1"]


def _missing() -> list[str]:
    missing = rgw.missing_binaries()
    try:
        object_store.s3a_jars()
    except UserError:
        missing.append("the S3A jars")
    return missing


MISSING = _missing()
needs_ceph = pytest.mark.skipif(
    bool(MISSING) and os.environ.get("CI") != "true",
    reason=f"{', '.join(MISSING)} not installed ({rgw.APT}; {object_store.JARS_INSTALL})",
)


def micro(tmp: Path, *extra: str) -> list[str]:
    """The reliability tests' micro smoke benchmark, writing under `tmp`."""
    base = [arg for arg in MICRO if not arg.startswith("verify.duckdb=")]
    return [*base, f"paths.results_dir={tmp / 'results'}", f"hydra.run.dir={tmp / 'outputs'}", *extra]


def daemons_of(state_dir: Path) -> list[int]:
    """Pids of live processes whose command line names the store's config (any daemon of it)."""
    conf = str(state_dir / "ceph.conf").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if conf in cmdline.split(b"\0") and state != "Z":
                found.append(int(entry.name))
    return found


def refused(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return True
    return False


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, micro_data: Path) -> dict[str, dict]:
    """The micro smoke benchmark on RGW (latency through the proxy) and on local disk, side by
    side: each run's process outcome and run directory. The dataset on RGW is built by the arrow
    builder straight onto the store, the one on disk by Spark: the answers must agree."""
    if MISSING:  # only reached in CI, where this is a failure
        pytest.fail(f"CI installs {', '.join(MISSING)}")
    tmp = tmp_path_factory.mktemp("object-store")
    procs = {
        "object": run_py(
            *micro(tmp / "object", "verify.duckdb=true"),
            "storage=object",
            "dataset.builder=arrow",
            f"storage.latency_ms={LATENCY_MS}",
            *SLOWDOWN,
            f"storage.dir={tmp / 'object' / 'store'}",
        ),
        "local": run_py(*micro(tmp / "local", f"paths.data_dir={micro_data}")),
    }
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        found = list((tmp / name / "results" / "runs" / "smoke").glob("*"))
        out[name] = {
            "code": proc.returncode,
            "stdout": stdout,
            "stderr": stderr,
            "run": found[0] if found else None,
        }
    out["store"] = tmp / "object" / "store"
    return out


@needs_ceph
def test_smoke_on_the_object_store_agrees_with_local_disk_and_duckdb(runs):
    obj, local = runs["object"], runs["local"]
    assert (obj["code"], local["code"]) == (0, 0), obj["stderr"][-3000:] + local["stderr"][-2000:]
    assert validate(obj["run"]) == []
    assert "DuckDB check skipped" not in obj["stderr"]  # the build's verification read S3 too
    on_store = json.loads((obj["run"] / "answers.json").read_text())
    on_disk = {
        (r["query_id"], r["window"]): r["checksums"]
        for r in json.loads((local["run"] / "answers.json").read_text())
    }
    assert len(on_store) == len(on_disk) == 4
    for rec in on_store:
        assert rec["duckdb_status"] == "agree", rec  # DuckDB read the bucket through httpfs
        assert rec["checksums"] == on_disk[(rec["query_id"], rec["window"])] == [rec["duckdb"]]
    assert json.loads((obj["run"] / "run.json").read_text())["answers_agree"] is True


@needs_ceph
def test_env_json_records_the_store_its_latency_and_no_key(runs):
    run = runs["object"]["run"]
    env = json.loads((run / "env.json").read_text())
    store = env["storage"]
    assert store["kind"] == "object" and store["server"].startswith("ceph-rgw 16.")
    assert store["data_dir"] == "s3a://icelab/data"
    assert store["endpoint"].startswith("http://127.0.0.1:")
    assert (
        store["spark_endpoint"].startswith("http://127.0.0.1:")
        and store["spark_endpoint"] != store["endpoint"]
    )
    assert (store["latency_ms"], store["latency_mechanism"]) == (LATENCY_MS, "proxy")
    assert env["spark_conf"]["spark.hadoop.fs.s3a.endpoint"] == store["spark_endpoint"]
    local = json.loads((runs["local"]["run"] / "env.json").read_text())["storage"]
    assert (local["kind"], local["latency_ms"], local["latency_mechanism"]) == ("local", 0, "none")
    written = [p for p in run.rglob("*") if p.is_file()]
    assert [
        p for p in written for key in (RGW_SECRET_KEY, RGW_ACCESS_KEY) if key.encode() in p.read_bytes()
    ] == []


@needs_ceph
def test_the_build_on_the_store_records_its_s3a_requests_by_phase(runs):
    """The dataset built on the store records what each phase sent through S3A: its commits' writes,
    each reading's lookups and reads; a dataset on local disk records none."""
    env = json.loads((runs["object"]["run"] / "env.json").read_text())
    phases = env["dataset"]["s3a_requests"]
    assert list(phases) == ["ingest", "summary", "verify spark/iceberg", "verify spark/parquet"]
    for name, sent in phases.items():
        assert sent["requests"] == sum(sent[k] for k in ("list", "head", "get", "other")), name
    # Each commit writes its manifest, manifest list and metadata file; each reading reads files.
    commits = OmegaConf.load(runs["object"]["run"] / "config.yaml").dataset.commits
    assert phases["ingest"]["other"] >= 3 * commits
    assert all(phases[f"verify spark/{t}"]["get"] > 0 for t in ("iceberg", "parquet"))
    assert all(phases[f"verify spark/{t}"]["head"] > 0 for t in ("iceberg", "parquet"))
    local = json.loads((runs["local"]["run"] / "env.json").read_text())["dataset"]
    assert local["s3a_requests"] is None


@needs_ceph
def test_the_proxy_carried_and_counted_the_requests(runs):
    run = runs["object"]["run"]
    carried = json.loads((run / "run.json").read_text())["proxy_requests"]
    assert {"GET bucket", "GET object", "HEAD object"} <= set(carried)  # listings, reads, lookups
    rows = pq.read_table(run / "measurements.parquet").to_pandas()
    assert (rows["s3_requests"] > 0).all()
    # A plan-only Parquet measurement lists its partitions and reads nothing.
    plan_only = rows[(rows["format"] == "parquet") & ~rows["executed"]]
    assert (plan_only["s3_list_requests"] > 0).all() and (plan_only["s3_get_requests"] == 0).all()
    parts = rows[["s3_list_requests", "s3_head_requests", "s3_get_requests"]].sum(axis=1)
    assert (parts <= rows["s3_requests"]).all()
    # Everything S3A counted in the measurements went through the proxy (which saw more: the
    # run's other reads of table metadata).
    assert rows["s3_requests"].sum() <= sum(carried.values())
    local = pq.read_table(runs["local"]["run"] / "measurements.parquet").to_pandas()
    assert local["s3_requests"].isna().all()


@needs_ceph
def test_a_measurement_that_met_a_fault_is_marked(runs):
    run = runs["object"]["run"]
    env = json.loads((run / "env.json").read_text())["storage"]
    assert env["faults"] == {"seed": 1, "slowdown_rate": 0.02, "reset_rate": 0, "stall_rate": 0, "stall_s": 0}
    record = json.loads((run / "run.json").read_text())
    dealt = record["proxy_faults"]["slowdown"]
    rows = pq.read_table(run / "measurements.parquet").to_pandas()
    marked = rows[rows["faulted"]]
    assert 0 < len(marked) == record["faulted_rows"]
    assert "faulted:" in runs["object"]["stdout"]
    # Every marked row names its fault or a retry S3A counted; no unmarked row names either.
    assert (marked["faults"].notna() | (marked["s3_retries"] > 0)).all()
    clean = rows[~rows["faulted"]]
    assert clean["faults"].isna().all() and (clean["s3_retries"] == 0).all()
    in_rows = marked["faults"].dropna().str.extract(r"slowdown=(\d+)")[0].astype(int).sum()
    assert 0 < in_rows <= dealt  # the run's other requests (the build, table setup) met some too
    local = pq.read_table(runs["local"]["run"] / "measurements.parquet").to_pandas()
    assert not local["faulted"].any() and local["s3_retries"].isna().all()
    # The medians leave the marked rows out (protocol.keep_faulted is false).
    keys = ["query_id", "variant", "window"]
    counted = rows[~rows["warmup"] & (rows["status"] == "ok") & ~rows["faulted"]]
    summary = pd.read_csv(run / "summary.csv").set_index(keys)
    measured = rows[~rows["warmup"] & (rows["status"] == "ok")].groupby(keys).size()
    assert summary["planning_ms_n"].astype(int).to_dict() == (
        counted.groupby(keys).size().reindex(measured.index, fill_value=0).to_dict()
    )
    assert (summary["faulted"] + summary["planning_ms_n"]).astype(int).to_dict() == measured.to_dict()


@needs_ceph
def test_no_server_process_is_left_after_the_run(runs):
    store = runs["store"]
    assert daemons_of(store) == []
    assert not (store / rgw.PIDS).exists()
    env = json.loads((runs["object"]["run"] / "env.json").read_text())["storage"]
    assert refused(env["endpoint"]) and refused(env["spark_endpoint"])


@needs_ceph
def test_a_staged_state_goes_up_one_put_per_file_and_reads_back(runs, tmp_path):
    """A staged metadata state (icelab.datagen.metadata.staging) is uploaded to RGW with one
    signed PUT per file, each key under the state's place, and reads back byte for byte; the
    metadata file its table no longer names stays behind; RGW is stopped after."""
    from icelab.core.object_store import s3
    from icelab.datagen.metadata import staging

    root = tmp_path / "staged"
    metadata = root / "iceberg" / "bench" / "as_ingested" / "metadata"
    metadata.mkdir(parents=True)
    files = {
        "version-hint.text": "3",
        "v1.metadata.json": json.dumps({"metadata-log": []}),
        "v2.metadata.json": json.dumps(
            {"metadata-log": [{"metadata-file": "s3a://icelab/x/v1.metadata.json"}]}
        ),
        "v3.metadata.json": json.dumps(
            {"metadata-log": [{"metadata-file": "s3a://icelab/x/v2.metadata.json"}]}
        ),
        "meta-r0-m0.avro": "entries " * 100,
    }
    for name, text in files.items():
        (metadata / name).write_text(text)
    place = "s3a://icelab/data/meta/staged-test"
    store = object_store.open_store(StorageConfig(kind="object", dir=str(runs["store"])), "s3a://icelab/data")
    try:
        record = staging.upload(None, root, place, progress=False)
        assert record["how"] == "put" and record["files"] == len(files) - 1
        key = "/icelab/data/meta/staged-test/iceberg/bench/as_ingested/metadata/"
        for name, text in files.items():
            status, body = s3.request(store.server, "GET", key + name)
            assert (status, body) == ((404, body) if name == "v1.metadata.json" else (200, text)), name
    finally:
        object_store.close()
    assert daemons_of(runs["store"]) == []


# SIGINT handled as in a terminal's foreground process: otherwise the child inherits the test
# runner's disposition, and a runner started in the background by a non-interactive shell (or
# under nohup) ignores SIGINT until a SparkContext installs its handler in that worker, so the
# child slept through the test's Ctrl-C (its /proc status showed SIGINT in SigIgn). SIGUSR1
# dumps the child's stacks, for stop_child's message should it hang.
CHILD = """
import faulthandler, json, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
faulthandler.register(signal.SIGUSR1, all_threads=True)
from icelab.core import object_store
from icelab.core.config import StorageConfig
store = object_store.open_store(StorageConfig(kind="object", dir=sys.argv[1], latency_ms=2), "s3a://icelab/data")
print(json.dumps({"endpoint": store.server.url, "proxy": store.spark_endpoint}), flush=True)
time.sleep(600)
"""


def start_child(state_dir: Path) -> tuple[subprocess.Popen, dict]:
    """A process holding the store (RGW and proxy, no Spark) until it is signalled."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(state_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    assert line, proc.communicate(timeout=60)[1][-3000:]
    return proc, json.loads(line)


def wait_gone(state_dir: Path, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while daemons_of(state_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    return daemons_of(state_dir)


def stop_child(proc: subprocess.Popen, sig: int, state_dir: Path, store: dict) -> None:
    """Signal the store's process; nothing of the store may be left running or listening."""
    proc.send_signal(sig)
    # Rgw.stop gives each of its three daemons 15 s to stop and 10 s more once killed: up to 75 s
    # on a loaded machine, so wait beyond that.
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        ignored = re.search(r"SigIgn:\s*(\w+)", Path(f"/proc/{proc.pid}/status").read_text())[1]
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        proc.kill()
        stacks = proc.communicate(timeout=30)[1][-6000:]
        pytest.fail(f"store's process still up 120 s after {sig!r} (SigIgn {ignored}); stacks:\n{stacks}")
    # SIGINT and SIGTERM: the process stops the store; SIGKILL: the kernel's parent-death signal.
    assert wait_gone(state_dir) == []
    # Not a refused connection: a freed port may be taken at once by another test's process
    # (seen once in a full run), so no listener on the store's ports may be the store's own
    # (the child was waited for above: only a process naming the store's directory can be).
    for url in (store["endpoint"], store["proxy"]):
        port = int(url.rsplit(":", 1)[1])
        held = [
            c.pid
            for c in psutil.net_connections("inet")
            if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid is not None
        ]
        stores = [pid for pid in held if any(str(state_dir) in part for part in supervisor.cmdline(pid))]
        assert stores == [], url
    # A killed process leaves its pid record; the next start checks and clears it (test_sweep_*).
    assert (state_dir / rgw.PIDS).exists() == (sig == signal.SIGKILL)


@needs_ceph
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_server_process_is_left_when_the_run_is_stopped(runs, sig):
    state_dir = runs["store"]  # the run's cluster, restarted
    proc, store = start_child(state_dir)
    assert len(daemons_of(state_dir)) == 3 and not refused(store["endpoint"])
    assert public(listening(proc.pid)) == []  # mon, OSD, RGW and proxy: every socket on loopback
    stop_child(proc, sig, state_dir, store)


def one_line(proc: subprocess.Popen) -> str:
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stdout + stderr, stderr
    return lines[0]


@needs_ceph
def test_bad_input_against_a_live_store_is_one_line_then_ctrl_c_stops_it(runs, tmp_path):
    # One start of the store serves both (each start costs seconds): bad input, then Ctrl-C.
    proc, store = start_child(runs["store"])
    try:
        port = store["endpoint"].rsplit(":", 1)[1]
        env = os.environ | {"ICELAB_S3_ACCESS_KEY": "nobody", "ICELAB_S3_SECRET_KEY": "wrong-secret"}
        args = [*micro(tmp_path), "storage=object"]
        wrong_keys = run_py(*args, f"storage.endpoint={store['endpoint']}", env=env)
        port_taken = run_py(*args, f"storage.port={port}", f"storage.dir={tmp_path / 'store'}")
        assert one_line(wrong_keys) == (
            f"icelab: error: storage endpoint {store['endpoint']} refused the credentials for bucket "
            "'icelab' (403 InvalidAccessKeyId); check the access and secret keys"
        )
        assert one_line(port_taken) == (
            f"icelab: error: storage.port={port}: 127.0.0.1:{port} is already in use; give a free port "
            "or storage.port=0 (any free port)"
        )
    except BaseException:
        proc.kill()
        raise
    stop_child(proc, signal.SIGINT, runs["store"], store)


def test_an_unreachable_endpoint_is_one_line(tmp_path):
    port = supervisor.free_port()
    env = os.environ | {"ICELAB_S3_ACCESS_KEY": "a", "ICELAB_S3_SECRET_KEY": "b"}
    line = one_line(
        run_py(*micro(tmp_path), "storage=object", f"storage.endpoint=http://127.0.0.1:{port}", env=env)
    )
    assert line.startswith(f"icelab: error: storage endpoint http://127.0.0.1:{port} is unreachable (")
    assert line.endswith("); check storage.endpoint")


def test_missing_ceph_names_the_apt_command(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as err:
        rgw.Rgw(tmp_path / "store", 0, "a", "b").start()
    assert str(err.value) == (
        "storage=object needs Ceph's RGW (monmaptool, ceph-mon, ceph-osd, ceph, radosgw, radosgw-admin "
        "not found): apt-get install --no-install-recommends ceph-mon ceph-osd radosgw"
    )
    assert not (tmp_path / "store").exists()


def test_missing_keys_of_an_endpoint_are_named(monkeypatch):
    monkeypatch.delenv("ICELAB_S3_ACCESS_KEY", raising=False)
    monkeypatch.setenv("ICELAB_S3_SECRET_KEY", "x")
    cfg = StorageConfig(kind="object", endpoint="http://127.0.0.1:9")
    with pytest.raises(UserError, match="needs its keys in the environment: ICELAB_S3_ACCESS_KEY unset"):
        object_store.open_store(cfg, "s3a://icelab/data")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"kind": "local", "latency_ms": 5}, "latency_ms needs storage=object"),
        (
            {"kind": "object", "endpoint": "https://s3.example.com", "latency_ms": 5},
            "latency_ms needs an http://",
        ),
        ({"kind": "object", "endpoint": "s3.example.com"}, "give the endpoint as http://host:port"),
        ({"kind": "object", "latency_ms": -1}, "greater than or equal to 0"),
    ],
    ids=["latency-local", "latency-https", "endpoint-scheme", "latency-negative"],
)
def test_storage_settings_are_checked(settings, message):
    with pytest.raises(ValueError, match=message):
        StorageConfig(**settings)


def test_data_dir_must_be_a_bucket():
    with pytest.raises(
        UserError, match=r"paths.data_dir='data' is not an s3a:// URI \(default: s3a://icelab/data\)"
    ):
        object_store.data_uri(StorageConfig(kind="object"), "data")


def test_s3a_refusals_become_one_line():
    # The first lines of what S3A raised for a wrong secret key against RGW.
    raw = (
        "An error occurred while calling o92.exists.\n: java.nio.file.AccessDeniedException: "
        "s3a://icelab/data: getFileStatus on s3a://icelab/data: "
        "com.amazonaws.services.s3.model.AmazonS3Exception: Forbidden (Service: Amazon S3; Status Code: "
        "403; Error Code: 403 Forbidden; Request ID: tx0; S3 Extended Request ID: null; Proxy: null), "
        "S3 Extended Request ID: null:403 Forbidden\n\tat org.apache.hadoop.fs.s3a..."
    )
    assert storage.s3a_error(raw, "s3a://icelab/data", "http://127.0.0.1:1") == (
        "the object store at http://127.0.0.1:1 refused the credentials for s3a://icelab/data "
        "(403 AccessDenied)"
    )
    assert storage.s3a_error("java.lang.OutOfMemoryError", "s3a://b/x", "e") is None


def test_duckdb_and_locks_see_a_bucket_by_its_store():
    uri = "s3a://icelab/data/micro-0123"
    assert storage.duckdb_path(uri) is None and locks.key_of(uri) == uri  # no store open: unknown
    storage.register_store("s3a://icelab/data", "/srv/store-a")
    try:
        assert storage.duckdb_path(uri) == "s3://icelab/data/micro-0123"
        assert locks.key_of(uri) == f"/srv/store-a {uri}"  # another store's icelab bucket is elsewhere
    finally:
        storage.forget_store("s3a://icelab/data")
    assert storage.duckdb_path("file:///tmp/x") == "/tmp/x"


def test_sweep_kills_only_daemons_of_its_own_store(tmp_path):
    conf = tmp_path / "ceph.conf"
    code = "import time; time.sleep(120)"
    # argv[0] of a Ceph daemon with this store's config, and one of another store's.
    ours = subprocess.Popen(["bash", "-c", f'exec -a radosgw {sys.executable} -c "{code}" -c {conf}'])
    other = subprocess.Popen(
        ["bash", "-c", f'exec -a radosgw {sys.executable} -c "{code}" -c /elsewhere/ceph.conf']
    )
    try:
        deadline = time.monotonic() + 10
        while (
            not (rgw.is_ours(ours.pid, conf) and not rgw.is_ours(other.pid, conf))
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        (tmp_path / rgw.PIDS).write_text(json.dumps([{"pid": ours.pid}, {"pid": other.pid}]))
        assert rgw.sweep(tmp_path) == [ours.pid]
        assert ours.wait(timeout=15) == -signal.SIGTERM
        assert other.poll() is None  # a recycled pid running something else is left alone
        assert not (tmp_path / rgw.PIDS).exists()
    finally:
        for proc in (ours, other):
            proc.kill()
            proc.wait()


# The delay proxy, against a small echo server: no Ceph needed.


class Echo:
    """An HTTP-ish echo server on loopback: answers each request line with its own bytes."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)


@pytest.fixture
def proxied() -> Iterator[Callable[[float], tuple[DelayProxy, socket.socket]]]:
    """A delay proxy in front of an echo server, and a connection through it (no Nagle)."""
    echo, made = Echo(), []

    def make(one_way_ms: float) -> tuple[DelayProxy, socket.socket]:
        proxy = DelayProxy("127.0.0.1", echo.port, one_way_ms)
        proxy.start()
        sock = socket.create_connection(("127.0.0.1", proxy.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        made.append((proxy, sock))
        return proxy, sock

    yield make
    for proxy, sock in made:
        sock.close()
        proxy.stop()
    echo.sock.close()


def test_the_proxy_delays_each_way_keeps_byte_order_and_counts_requests(proxied):
    proxy, sock = proxied(25)
    requests = (
        b"HEAD /icelab/data/x HTTP/1.1\r\nHost: h\r\n\r\n"
        b"GET /icelab/?list-type=2&prefix=data HTTP/1.1\r\nHost: h\r\n\r\n"
        b"PUT /icelab/data/y HTTP/1.1\r\nContent-Length: 9\r\n\r\nGET /x/y "  # a body like a request
        b"PUT /icelab/data/z HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nGET \r\n0\r\n\r\n"
        b"GET / HTTP/1.1\r\n\r\n"
    )
    t0, got = time.perf_counter(), b""
    for i in range(0, len(requests), 7):  # many small writes: their order must survive the delays
        sock.sendall(requests[i : i + 7])
    while len(got) < len(requests):
        got += sock.recv(65536)
    elapsed = time.perf_counter() - t0
    assert got == requests
    # 25 ms each way, paid once: the chunks are delayed side by side, not one after another.
    assert 0.05 <= elapsed < 0.6
    assert proxy.counts() == {"GET bucket": 1, "GET service": 1, "HEAD object": 1, "PUT object": 2}


def test_a_round_trip_through_the_proxy_pays_the_latency_once(proxied):
    _, sock = proxied(20)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        sock.sendall(b"GET /b/k HTTP/1.1\r\n\r\n")
        sock.recv(100)
        times.append(time.perf_counter() - t0)
    assert min(times) >= 0.04 and sorted(times)[2] < 0.08  # 2 x 20 ms, not more per request


def test_path_kinds():
    assert [path_kind(p) for p in ("/", "/b", "/b/", "/b?list-type=2", "/b/k", "/b/k/l?x=1")] == [
        "service",
        "bucket",
        "bucket",
        "bucket",
        "object",
        "object",
    ]


def test_a_stream_the_counter_cannot_parse_is_counted_once_as_such():
    counts: Counter[str] = Counter()
    counter = RequestCounter(counts, threading.Lock())
    counter.feed(b"PUT /b/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")  # no hex size
    counter.feed(b"GET /b/k HTTP/1.1\r\n\r\n")
    assert counts == {"PUT object": 1, "unparsed connection": 1}


def test_stopping_the_proxy_ends_its_thread():
    proxy = DelayProxy("127.0.0.1", supervisor.free_port(), 1)
    proxy.start()
    proxy.stop()
    assert not any(t.name == "icelab-delay-proxy" for t in threading.enumerate())


def fake_ceph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int, error: str) -> Path:
    """A `ceph` first on PATH that fails `failures` times with `error`, then prints 0; the calls
    it received are counted in its directory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ceph"
    script.write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{bin_dir}/calls" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{bin_dir}/calls"\n'
        f'if [ $n -le {failures} ]; then echo "{error}" >&2; exit 1; fi\n'
        "echo 0\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return bin_dir / "calls"


def stand_in(tmp_path: Path, timeout_s: float = 30.0) -> rgw.Rgw:
    store = rgw.Rgw(tmp_path / "store", 0, "a", "b", start_timeout_s=timeout_s)
    (store.state_dir / "log").mkdir(parents=True)
    store.deadline = time.monotonic() + timeout_s
    return store


def test_a_ceph_command_waits_for_a_monitor_that_is_not_ready(tmp_path, monkeypatch):
    # CI saw the first `osd new` after a fresh start fail so, once: it is retried, not fatal.
    error = "Error EPERM: problem getting command descriptions from mon."
    calls = fake_ceph(tmp_path, monkeypatch, 3, error)
    assert stand_in(tmp_path)._ceph("osd", "new", "some-uuid").strip() == "0"
    assert calls.read_text().strip() == "4"


def test_any_other_ceph_failure_is_one_error_at_once(tmp_path, monkeypatch):
    calls = fake_ceph(tmp_path, monkeypatch, 1, "Error EINVAL: bad crush location")
    with pytest.raises(UserError, match="object store: ceph -c failed: Error EINVAL: bad crush location"):
        stand_in(tmp_path)._ceph("osd", "crush", "add")
    assert calls.read_text().strip() == "1"


def test_a_monitor_never_ready_ends_at_the_start_deadline(tmp_path, monkeypatch):
    fake_ceph(tmp_path, monkeypatch, 10_000, "Error EPERM: problem getting command descriptions from mon.")
    with pytest.raises(UserError, match=r"object store: ceph not ready within storage.start_timeout_s=2 s"):
        stand_in(tmp_path, timeout_s=2.0)._ceph("osd", "new", "x")


# The store dies mid-run: RGW killed by a failpoint (`@radosgw`: the run's own radosgw gets
# SIGKILL after a chosen measurement), once with no time to come back, then with a restart.


# Bound on each run: a micro run with one outage takes about a minute; one that does not notice
# the store is gone fails every measurement left after its S3A retries (minutes).
OUTAGE_RUN_S = 180
# One attempt per S3 request in these runs: the failed measurement's retries against a store that
# is gone only add wall time to the suite (engine.conf overrides the store's own S3A settings).
ONE_ATTEMPT = [
    "++engine.conf.spark.hadoop.fs.s3a.attempts.maximum=1",
    "++engine.conf.spark.hadoop.fs.s3a.retry.limit=1",
]


# The store lost after the last measurement, at the start of a phase that reads it; the store
# is not waited for (storage.outage_wait_s=0), so the bound is the detection's: the run must end
# within LATE_BOUND_S of the kill. Unbounded, the overhead pairs fail one by one through S3A's
# retries and the run ends complete; the answers check waits on DuckDB's.
LATE = ["storage.outage_wait_s=0"]
LATE_PHASES = (("overhead_pairs", ["protocol.overhead_pairs=1"]), ("answers", ["verify.duckdb=true"]))
LATE_BOUND_S = 0 + 60


BACK_KILLS = "protocol.measurement:3@radosgw;phase.overhead_pairs@radosgw"


@pytest.fixture(scope="module")
def outages(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Two micro runs on the `runs` store (its data reused), RGW killed after a measurement:
    `lost` with storage.outage_wait_s=0 (no restart: the run ends), then `back` with the default
    bound (radosgw restarted) on the same results, which must start clean. Each run's outcome,
    its run directory, and the processes still carrying its mark in their environment."""
    tmp = tmp_path_factory.mktemp("outage")
    out = {}
    for name, kill_at, extra in (
        ("lost", "protocol.measurement:2@radosgw", [*ONE_ATTEMPT, "storage.outage_wait_s=0"]),
        # Killed twice, each time restarted: after a measurement, then as the overhead pairs start.
        ("back", BACK_KILLS, [*ONE_ATTEMPT, "protocol.repetitions=1", "protocol.overhead_pairs=1"]),
        # Lost after the rounds (issue 75), with S3A's and DuckDB's settings as a user has them.
        *((f"late-{p}", f"phase.{p}@radosgw", [*LATE, *more]) for p, more in LATE_PHASES),
    ):
        mark = f"icelab-outage-{name}-{os.getpid()}"
        before = set((tmp / "results" / "runs" / "smoke").glob("*"))
        t0 = time.monotonic()
        proc = run_py(
            *micro(tmp),
            "storage=object",
            f"storage.dir={runs['store']}",
            *extra,
            env=os.environ | {"ICELAB_KILL_AT": kill_at, "ICELAB_TEST_MARK": mark},
        )
        try:
            stdout, stderr = proc.communicate(timeout=OUTAGE_RUN_S)
        except subprocess.TimeoutExpired:  # a run that does not notice: ended here, and failed below
            proc.kill()
            stdout, stderr = proc.communicate(timeout=60)
        found = set((tmp / "results" / "runs" / "smoke").glob("*")) - before
        said = [line for line in stderr.splitlines() if line.startswith("icelab:")]
        print(f"{name}: exit {proc.returncode} after {time.monotonic() - t0:.0f} s", *said, sep="\n  ")
        out[name] = {
            "code": proc.returncode,
            "stdout": stdout,
            "stderr": stderr,
            "seconds": time.monotonic() - t0,
            "ended_utc": dt.datetime.now(dt.timezone.utc),
            "run": found.pop() if found else None,
            "left": carrying(mark),
        }
    return out


def carrying(mark: str) -> list[int]:
    """Pids of live processes with `ICELAB_TEST_MARK=mark` in their environment: whatever a run
    started (its driver JVM, Ceph's daemons) inherits it."""
    needle = f"ICELAB_TEST_MARK={mark}".encode()
    found = []
    for proc in psutil.process_iter():
        try:
            if needle in Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0"):
                found.append(proc.pid)
        except (OSError, psutil.Error):
            continue
    return found


def rows_of(run: Path) -> pd.DataFrame:
    return pq.read_table(run / "measurements.parquet").to_pandas()


@needs_ceph
def test_a_store_that_does_not_come_back_ends_the_run_interrupted_in_one_line(outages, runs):
    lost = outages["lost"]
    assert lost["code"] == 3, lost["stderr"][-3000:]
    lines = [line for line in lost["stderr"].splitlines() if line.startswith("icelab:")]
    assert "Traceback" not in lost["stderr"] and len(lines) == 1, lost["stderr"][-3000:]
    # RGW died after the 2nd measurement: the 3rd failed, and is kept, marked.
    assert re.fullmatch(
        r"icelab: the object store at http://127\.0\.0\.1:\d+ stopped answering during \S+ \S+ \S+; "
        r"not back within storage\.outage_wait_s=0 s; run interrupted, 3 rows kept in \S+",
        lines[0],
    ), lines[0]
    assert lines[0].endswith(str(lost["run"]))
    rows = rows_of(lost["run"])
    assert rows["status"].tolist() == ["ok", "ok", "error"]
    assert rows["faults"].tolist()[-1] == "outage" and rows["faulted"].tolist() == [False, False, True]
    record = json.loads((lost["run"] / "run.json").read_text())
    assert (record["status"], record["rows"]) == ("interrupted", 3)
    assert "stopped answering" in record["ended"]
    assert lost["left"] == [] and daemons_of(runs["store"]) == []  # no JVM, no Ceph daemon
    assert not (runs["store"] / rgw.PIDS).exists()


@needs_ceph
def test_a_store_restarted_within_the_bound_lets_the_run_finish(outages, runs, capsys):
    back = outages["back"]
    assert back["code"] == 0, back["stderr"][-3000:]
    assert re.search(
        r"icelab: the object store at http://127\.0\.0\.1:\d+ stopped answering during .+; "
        r"radosgw restarted after [\d.]+ s, measuring goes on",
        back["stderr"],
    ), back["stderr"][-3000:]
    rows = rows_of(back["run"])
    assert len(rows) == 8  # every planned measurement (one round): the run went on after the restart
    # Each outage is one console line, and an event of run.json: which phase, how long, how back.
    said = [line for line in back["stderr"].splitlines() if "stopped answering" in line]
    assert len(said) == 2
    assert said[1].endswith("measuring goes on; 1 overhead pair measured across it, marked"), said
    events = json.loads((back["run"] / "run.json").read_text())["store_events"]
    assert [(e["phase"].split()[0], e["outcome"], e["restarted"]) for e in events] == [
        (rows["query_id"][3], "back", True),
        ("overhead", "back", True),
    ]
    assert all((e["last_answered_utc"] or "") <= e["detected_utc"] and e["seconds"] > 0 for e in events)
    overhead = pd.read_csv(back["run"] / "overhead.csv")
    assert overhead["faults"].fillna("").tolist()[0] == "outage" and overhead["faulted"].sum() >= 1
    assert "failed in a store outage (marked)" in back["stdout"]
    assert contract_main([str(back["run"]), "--allow-failures"]) == 0
    assert re.search(
        r"1 failed in a store outage \(marked\); 2 store outages \(.+: back after [\d.]+ s, "
        r"overhead pairs: back after [\d.]+ s\)\)$",
        capsys.readouterr().out.strip(),
    )
    failed = rows[rows["status"] != "ok"]
    assert len(failed) == 1 and failed.index[0] == 3 and failed["faults"].tolist() == ["outage"]
    assert rows["faulted"].sum() == 1  # only the outage's row leaves the medians
    # The contract's validator names the failed measurement, as it does any error row.
    assert [finding.split(",")[0] for finding in validate(back["run"])] == ["1 failed measurements"]
    record = json.loads((back["run"] / "run.json").read_text())
    assert (record["status"], record["answers_agree"]) == ("complete", True)
    # The interrupted run before it stays interrupted; nothing of either is left running.
    assert json.loads((outages["lost"]["run"] / "run.json").read_text())["status"] == "interrupted"
    assert back["left"] == [] and daemons_of(runs["store"]) == []


@needs_ceph
def test_no_fault_run_prints_a_traceback(outages):
    for name, seen in outages.items():
        printed = seen["stdout"] + seen["stderr"]
        assert not TRACES.search(printed), (name, printed[-3000:])


@needs_ceph
@pytest.mark.parametrize("phase", [p for p, _ in LATE_PHASES])
def test_a_store_lost_after_the_rounds_ends_the_run_within_its_bound(outages, runs, phase):
    late = outages[f"late-{phase}"]
    assert late["code"] == 3, late["stderr"][-3000:]
    said = [line for line in late["stderr"].splitlines() if line.startswith("icelab:")]
    assert len(said) == 1 and f"stopped answering during {phase.replace('_', ' ')}" in said[0], said
    # Spark's errors and Java's stack traces went to the run's spark.log, not to the console.
    assert not [line for line in late["stderr"].splitlines() if " ERROR " in line or line.startswith("\tat ")]
    rows = rows_of(late["run"])
    # Every planned row measured and kept (a retake, were one marked, comes on top).
    assert (rows["retake"] == 0).sum() == PLANNED and (rows["status"] == "ok").all()
    last = pd.to_datetime(rows["measured_utc"]).max()
    assert (late["ended_utc"] - last).total_seconds() <= LATE_BOUND_S, late["stderr"][-3000:]
    record = json.loads((late["run"] / "run.json").read_text())
    assert record["status"] == "interrupted" and late["left"] == []


# Executors that share no disk with the driver: the standalone cluster's workers in a mount
# namespace of their own (engine.isolate_workers), the data on the `runs` store (reused).
ISOLATED_RUN_S = 300


@pytest.fixture(scope="module")
def isolated(runs: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One round of the micro smoke benchmark on the store, on isolated workers."""
    from tests.core.test_cluster import STANDALONE

    tmp = tmp_path_factory.mktemp("isolated")
    t0 = time.monotonic()
    proc = run_py(
        *micro(tmp),
        *STANDALONE,
        "engine.isolate_workers=true",
        "protocol.repetitions=1",
        "storage=object",
        f"storage.dir={runs['store']}",
        env=os.environ | {"XDG_RUNTIME_DIR": str(tmp / "runtime")},
    )
    stdout, stderr = proc.communicate(timeout=ISOLATED_RUN_S)
    print(f"isolated: exit {proc.returncode} after {time.monotonic() - t0:.0f} s")
    found = list((tmp / "results" / "runs" / "smoke").glob("*"))
    return {"code": proc.returncode, "stderr": stderr, "run": found[0] if found else None, "tmp": tmp}


@needs_ceph
def test_isolated_workers_run_on_the_store_and_see_no_driver_disk(isolated, runs):
    assert isolated["code"] == 0, isolated["stderr"][-3000:]
    run = isolated["run"]
    assert validate(run) == []
    record = json.loads((run / "run.json").read_text())
    assert (record["status"], record["answers_agree"]) == ("complete", True)
    started = json.loads((run / "env.json").read_text())["engine"]["cluster"]
    # The worker ran in a mount namespace of its own, the results and the store's files hidden.
    spaces = started["isolated"]["mount_namespaces"]
    assert set(spaces) == {"driver", "worker-1"} and spaces["worker-1"] != spaces["driver"], spaces
    assert str((isolated["tmp"] / "results").resolve()) in started["isolated"]["hidden"]
    # Its executor's log still reaches the worker's work directory (bound back into its namespace).
    (executor,) = Path(started["dir"]).glob("worker-1/app-*/0")
    assert (executor / "stderr").is_file()
    assert daemons_of(runs["store"]) == []
