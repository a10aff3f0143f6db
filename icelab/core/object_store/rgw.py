"""A real S3 server on loopback: Ceph's RADOS Gateway on a one-node cluster icelab owns.

Debian bookworm ships Ceph 16.2, whose RGW needs a RADOS cluster under it: one monitor, one
BlueStore OSD on a sparse file, and radosgw with its beast frontend, every address 127.0.0.1
and every file (config, monitor and OSD stores, logs, pid record) in one state directory. The
cluster is made on first use and restarted from that directory afterwards, so datasets written
to it are reused like local ones.

No daemon outlives the run: icelab.core.supervisor stops them in reverse order when the run
ends, they get a signal from the kernel when the process that started them dies
(PR_SET_PDEATHSIG), and their pids are recorded with their start times, so the next start kills
any that are still there (after checking /proc, so a recycled pid is never hit).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from icelab.core import supervisor
from icelab.core.errors import UserError

APT = "apt-get install --no-install-recommends ceph-mon ceph-osd radosgw"
BINARIES = ("monmaptool", "ceph-mon", "ceph-osd", "ceph", "radosgw", "radosgw-admin")
DAEMONS = ("ceph-mon", "ceph-osd", "radosgw")
PIDS = "daemons.json"  # the supervisor's state file
GRACE_S = 15.0  # from SIGTERM to SIGKILL, for each daemon in turn
STATE = "state.json"
USER = "icelab"
RGW_NAME = "client.rgw"
# What `ceph` says when the monitor it reached is up but not serving commands yet (seen in CI:
# EPERM on the first `osd new` after a fresh start); it passes within seconds.
MON_NOT_READY = "problem getting command descriptions"

CONF = """\
[global]
fsid = {fsid}
mon host = [v1:127.0.0.1:{mon_port}]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
public network = 127.0.0.1/32
ms bind msgr2 = false
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# One monitor: nothing to batch for, so map changes (a pool per RGW need) are proposed at once.
paxos propose interval = 0.05
paxos min wait = 0.01
run dir = {dir}/run
admin socket =
log file = {dir}/log/$name.log
pid file =
keyring = {dir}/keyring
mon data = {dir}/mon
osd data = {dir}/osd
osd objectstore = bluestore
bluestore block create = true
bluestore block size = {block_bytes}
osd memory target = 1073741824
osd max object name len = 460
osd max object namespace len = 64
osd fast shutdown = true
# The OSD is put in the CRUSH map when it is made; updating its place and class from the OSD at
# each start raced the monitor connection ("wrong fsid") and failed one start in a few.
osd crush update on start = false
osd class update on start = false

[{rgw_name}]
rgw frontends = beast endpoint=127.0.0.1:{rgw_port} tcp_nodelay=1
rgw data = {dir}/rgw
rgw enable usage log = false
rgw dns name = 127.0.0.1
debug rgw = 0
"""


def missing_binaries() -> list[str]:
    """The Ceph programs this needs that are not on PATH."""
    return [name for name in BINARIES if shutil.which(name) is None]


# The signal a daemon gets from the kernel when the process that started it dies (kill -9
# included): the monitor and the OSD shut down cleanly on SIGTERM; RGW, which keeps no state of
# its own, would wait up to two minutes for a cluster going down with it, so it is killed.
PARENT_DEATH_SIGNAL = {"ceph-mon": signal.SIGTERM, "ceph-osd": signal.SIGTERM, "radosgw": signal.SIGKILL}


def is_ours(pid: int, conf: Path) -> bool:
    """Whether `pid` runs a Ceph daemon of the cluster configured by `conf` (checked in /proc)."""
    args = supervisor.cmdline(pid)
    return bool(args) and os.path.basename(args[0]) in DAEMONS and str(conf) in args


def sweep(state_dir: Path) -> list[int]:
    """Stop the daemons a dead run left behind in `state_dir` (its pid record); return their pids."""
    conf = state_dir / "ceph.conf"
    left = supervisor.sweep(state_dir / PIDS, lambda pid, _: is_ours(pid, conf), GRACE_S, in_turn=True)
    return left["stopped"] if left else []


class _NotReady(Exception):
    """A Ceph command failed the way a monitor that is still starting makes it fail."""


_KEEPER: ThreadPoolExecutor | None = None


def _keeper() -> ThreadPoolExecutor:
    """One thread that lives as long as the process: the parent thread of a restarted radosgw."""
    global _KEEPER
    if _KEEPER is None:
        _KEEPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="icelab-rgw-keeper")
    return _KEEPER


@dataclass
class Rgw:
    """One Ceph RGW with its one-node cluster, all of it under `state_dir`.

    Args:
        state_dir: config, stores, logs and the pid record (created; reused when it holds a cluster).
        port: RGW's port on 127.0.0.1; 0 picks a free one.
        access_key, secret_key: the S3 user's fixed keys.
        capacity_gb: the OSD's sparse block file (its ceiling for data).
        start_timeout_s: how long the whole start may take.
    """

    state_dir: Path
    port: int
    access_key: str
    secret_key: str
    capacity_gb: float = 20.0
    start_timeout_s: float = 180.0
    started_s: float | None = None
    daemons: supervisor.Supervisor = field(init=False)

    def __post_init__(self) -> None:
        self.daemons = supervisor.Supervisor(
            "object store",
            self.state_dir / PIDS,
            self.state_dir / "log",
            "storage.start_timeout_s",
            self.start_timeout_s,
            grace_s=GRACE_S,
            in_turn=True,  # RGW first, the monitor last
        )

    @property
    def conf(self) -> Path:
        return self.state_dir / "ceph.conf"

    @property
    def endpoint(self) -> str:
        return f"http://{supervisor.HOST}:{self.port}"

    def start(self) -> None:
        """Make (first time) or restart the cluster and RGW; wait until RGW answers.

        Raises:
            UserError: Ceph not installed, the port taken, or a daemon that does not come up
                (naming its log).
        """
        missing = missing_binaries()
        if missing:
            raise UserError(f"storage=object needs Ceph's RGW ({', '.join(missing)} not found): {APT}")
        if self.port and supervisor.port_taken(self.port):
            raise UserError(
                f"storage.port={self.port}: 127.0.0.1:{self.port} is already in use; "
                "give a free port or storage.port=0 (any free port)"
            )
        t0 = time.monotonic()
        self.deadline = t0 + self.start_timeout_s
        self.state_dir.mkdir(parents=True, exist_ok=True)
        sweep(self.state_dir)
        state = self._state()
        fresh = not state.get("ready")
        if fresh:
            for sub in ("mon", "osd", "rgw", "run"):
                shutil.rmtree(self.state_dir / sub, ignore_errors=True)
            state = {"fsid": str(uuid.uuid4()), "osd_uuid": str(uuid.uuid4()), "ready": False}
            self._write_state(state)
        for sub in ("mon", "osd", "rgw", "run", "log"):
            (self.state_dir / sub).mkdir(exist_ok=True)
        self.port = self.port or supervisor.free_port()
        mon_port = supervisor.free_port()
        self.conf.write_text(
            CONF.format(
                fsid=state["fsid"],
                mon_port=mon_port,
                rgw_port=self.port,
                dir=self.state_dir,
                block_bytes=int(self.capacity_gb * 1024**3),
                rgw_name=RGW_NAME,
            )
        )
        try:
            self._start(state, mon_port, fresh)
        except BaseException:
            self.stop()
            raise
        self.started_s = round(time.monotonic() - t0, 1)

    def _start(self, state: dict, mon_port: int, fresh: bool) -> None:
        monmap = self.state_dir / "run" / "monmap"
        # The monitor's address is in its map: a fresh map at this start's port, injected on restart.
        self._run("monmaptool", "--create", "--clobber", "--fsid", state["fsid"], "--addv", "a",
                  f"[v1:127.0.0.1:{mon_port}]", str(monmap))  # fmt: skip
        if fresh:
            self._run("ceph-mon", "-c", str(self.conf), "-i", "a", "--mkfs", "--monmap", str(monmap))
        else:
            self._run("ceph-mon", "-c", str(self.conf), "-i", "a", "--inject-monmap", str(monmap))
        self._spawn("ceph-mon", "-c", str(self.conf), "-i", "a", "-f")
        if fresh:
            osd_id = self._ceph("--connect-timeout", "60", "osd", "new", state["osd_uuid"]).strip()
            if osd_id != "0":
                raise UserError(f"object store: the new OSD got id {osd_id!r}, not 0 ({self.state_dir})")
            self._run("ceph-osd", "-c", str(self.conf), "-i", "0", "--mkfs", "--osd-uuid", state["osd_uuid"])
            self._ceph("osd", "crush", "add", "osd.0", "1.0", "root=default", "host=icelab")
        self._spawn("ceph-osd", "-c", str(self.conf), "-i", "0", "-f")
        self._spawn("radosgw", "-c", str(self.conf), "-n", RGW_NAME, "-f")
        self._wait_http()
        if fresh:
            self._run("radosgw-admin", "-c", str(self.conf), "user", "create", f"--uid={USER}",
                      f"--display-name={USER}", f"--access-key={self.access_key}",
                      f"--secret-key={self.secret_key}")  # fmt: skip
            state["ready"] = True
            self._write_state(state)

    def restart_gateway(self, deadline: float) -> None:
        """Start radosgw again on its port, the monitor and the OSD (and so the data) untouched;
        wait until it answers HTTP.

        Args:
            deadline: a `time.monotonic()` value the restart must be done by.

        Raises:
            UserError: a daemon of the cluster exited, or radosgw did not answer by `deadline`.
        """
        self.daemons.drop("radosgw")
        self.deadline = deadline
        # Started from the keeper thread, whoever asks: PR_SET_PDEATHSIG fires when the *thread*
        # that forked the daemon ends, and the store guard's watcher, which restarts a store lost
        # after the rounds, ends with its phase (the radosgw it started died with it).
        _keeper().submit(self._spawn, "radosgw", "-c", str(self.conf), "-n", RGW_NAME, "-f").result()
        self._wait_http()

    def _state(self) -> dict:
        try:
            return json.loads((self.state_dir / STATE).read_text())
        except (OSError, ValueError):
            return {}

    def _write_state(self, state: dict) -> None:
        tmp = self.state_dir / f".{STATE}.tmp"
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_dir / STATE)

    def _log(self, name: str) -> Path:
        return self.state_dir / "log" / f"{name}.out"

    def _remaining(self) -> float:
        return max(1.0, self.deadline - time.monotonic())

    def _ceph(self, *args: str) -> str:
        """A `ceph` command against the monitor just spawned, repeated while the monitor says it
        is not ready yet (MON_NOT_READY) until the start's deadline."""
        while True:
            try:
                return self._run("ceph", "-c", str(self.conf), *args, transient=MON_NOT_READY)
            except _NotReady:
                if self._remaining() <= 1.0:
                    raise UserError(self._timeout_message("ceph")) from None
                time.sleep(0.5)

    def _run(self, *args: str, transient: str | None = None) -> str:
        """Run one Ceph command to its end; its output goes to the log directory.

        Raises:
            _NotReady: it failed with `transient` in its error output (the caller retries).
            UserError: it failed otherwise, or ran past the start's deadline.
        """
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=self._remaining())
        except subprocess.TimeoutExpired:
            raise UserError(self._timeout_message(args[0])) from None
        with self._log("commands").open("a") as log:
            log.write(f"$ {' '.join(args)}\n{out.stdout}{out.stderr}(exit {out.returncode})\n")
        if out.returncode != 0 and transient and transient in out.stderr:
            raise _NotReady(args[0])
        if out.returncode != 0:
            detail = (out.stderr.strip() or out.stdout.strip()).splitlines()
            raise UserError(
                f"object store: {args[0]} {args[1] if len(args) > 1 else ''} failed: "
                f"{detail[-1] if detail else f'exit {out.returncode}'} (see {self._log('commands')})"
            )
        return out.stdout

    def _spawn(self, *args: str) -> None:
        """Start a daemon in the foreground (-f), recorded before anything else; fail at once
        when it exits straight away."""
        name = args[0]
        self.daemons.launch(name, args, self._log(name), death_signal=PARENT_DEATH_SIGNAL[name])
        time.sleep(0.2)
        self.daemons.check()

    def _wait_http(self) -> None:
        self.daemons.wait("radosgw", self._answers_http, self.deadline)

    def _answers_http(self) -> bool:
        try:
            with socket.create_connection((supervisor.HOST, self.port), timeout=1) as sock:
                sock.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                return sock.recv(12).startswith(b"HTTP/1.")
        except OSError:
            return False

    def _timeout_message(self, what: str) -> str:
        return self.daemons.not_ready(what)

    def stop(self) -> None:
        """Stop RGW, then the OSD, then the monitor; forget their pids."""
        self.daemons.stop()
