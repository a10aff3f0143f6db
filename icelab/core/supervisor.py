"""Every process icelab starts and must stop: the standalone cluster's master and workers, the
object store's Ceph daemons.

An owner makes a `Supervisor`, which launches each daemon in a process group and session of its
own (a terminal's Ctrl-C goes to the run, which stops the daemons in order) with its output
appended to its log file, waits until the owner's readiness check passes (failing with the
daemon's name and the tail of its log when one exits, or when time is up), and stops them all:
SIGTERM to each process group and every process below it, SIGKILL after a grace period. While
any supervisor has daemons running, SIGTERM and SIGHUP end the run like Ctrl-C (every `finally`
runs), and an atexit hook stops whatever still runs.

A driver killed outright (kill -9, out of memory) stops nothing. So each supervisor keeps a state
file: the pid and start time (clock ticks since boot) of the driver and of each daemon. `sweep`
stops what a dead driver's state file names, each process only while its start time is the one
recorded and its owner recognises its command line, so a reused pid is never hit.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import random
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icelab.core.errors import UserError
from icelab.core.results import write_json

HOST = "127.0.0.1"  # every daemon listens on loopback only
GRACE_S = 10.0  # from SIGTERM to SIGKILL
KILLED_S = 10.0  # for a SIGKILLed process to be gone
POLL_S = 0.2


# -- processes, as /proc shows them ------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (state first), or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def start_ticks(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot): a pid with another start is another process."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has ended)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def cmdline(pid: int) -> list[str]:
    """The arguments `pid` runs with; empty when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def descendants(pids: Sequence[int]) -> list[int]:
    """Every live process below `pids` (executors' Python workers leave their group)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))):
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass(frozen=True)
class Proc:
    """A process as it was seen: its pid and when it started."""

    pid: int
    started: int | None

    @classmethod
    def of(cls, pid: int) -> Proc:
        return cls(pid, start_ticks(pid))

    def running(self) -> bool:
        """Alive, and the same process (not another one given its pid since)."""
        return self.started is not None and alive(self.pid) and start_ticks(self.pid) == self.started

    def signal(self, sig: int) -> None:
        """Send `sig` to its process group when it leads one (a daemon icelab started does), else
        to it alone; nothing once it has ended."""
        if not self.running():
            return
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:  # no group of that id: it leads none
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, sig)
        except PermissionError:
            pass


def _gone(procs: Sequence[Proc], children: Sequence[subprocess.Popen], seconds: float) -> bool:
    """Wait up to `seconds` for every process of `procs` to end, reaping our own children."""
    deadline = time.monotonic() + seconds
    while True:
        for child in children:
            child.poll()
        if not any(p.running() for p in procs):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def terminate(
    procs: Sequence[Proc],
    children: Sequence[subprocess.Popen] = (),
    grace_s: float = GRACE_S,
    in_turn: bool = False,
) -> None:
    """SIGTERM each process's group and every process below it; SIGKILL what still runs after
    `grace_s`. `in_turn`: one process after the other, in the order given (each gone before the
    next is signalled); else all at once. `children` are reaped as they end."""
    for batch in [[p] for p in procs] if in_turn else [list(procs)]:
        batch += [Proc.of(pid) for pid in descendants([p.pid for p in batch])]
        for sig, seconds in ((signal.SIGTERM, grace_s), (signal.SIGKILL, KILLED_S)):
            for proc in batch:
                proc.signal(sig)
            if _gone(batch, children, seconds):
                break


def _die_with_parent(sig: int) -> Callable[[], None]:
    def prctl() -> None:  # runs in the child between fork and exec
        ctypes.CDLL(None, use_errno=True).prctl(1, sig, 0, 0, 0)  # 1: PR_SET_PDEATHSIG

    return prctl


def driver() -> dict[str, Any]:
    """This process, as a state file records it."""
    return {"pid": os.getpid(), "started": start_ticks(os.getpid())}


# -- ports on loopback -------------------------------------------------------------------------


EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10000  # below: ports other services are configured to use


def ephemeral_ports() -> range:
    """The kernel's range for the local end of outgoing connections (Linux's default if unread)."""
    try:
        low, high = map(int, EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def free_port() -> int:
    """A port nobody uses at 127.0.0.1 right now, below the kernel's ephemeral range.

    A daemon binds the port a moment after it is chosen. A port of the ephemeral range can be
    taken in between by any outgoing connection (radosgw then exits: "failed to bind address ...
    Address already in use"); below the range only a deliberate bind can take it.
    """
    chooser = random.SystemRandom()  # the global generator may be seeded by a run
    below = range(LOWEST_PORT, ephemeral_ports().start)
    for _ in range(100 if below else 0):
        port = chooser.choice(below)
        if not port_taken(port):
            return port
    with socket.socket() as sock:  # no room below the range: the kernel's choice
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_taken(port: int) -> bool:
    """Whether something listens on `port` (on 127.0.0.1 or every interface)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is no user
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False


def accepts(port: int) -> bool:
    """Whether a connection to 127.0.0.1:`port` is accepted."""
    with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1):
        return True
    return False


# -- daemons -----------------------------------------------------------------------------------


@dataclass
class Daemon:
    """One process a supervisor launched; `ports` are what its owner records of it."""

    role: str
    proc: subprocess.Popen
    log: Path
    started: int | None
    ports: dict[str, int | None] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"role": self.role, "pid": self.proc.pid, "started": self.started, **self.ports}

    def why(self) -> str:
        """The last error line of its log (else its last line)."""
        lines = self.log.read_text(errors="replace").splitlines() if self.log.is_file() else []
        errors = [line for line in lines if re.search(r"ERROR|Exception|Error:", line)]
        return (errors or lines or ["no output"])[-1].strip()[:300]


class Supervisor:
    """The daemons one owner launches, records in its state file and stops.

    Args:
        what: how messages name the owner ("standalone cluster", "object store").
        state_file: the record of the driver and the daemons while they run.
        logs: the directory messages point to.
        timeout_setting, timeout_s: the setting that bounds a start, and its value.
        describe: what else the state file keeps of the owner (asked at each save).
        grace_s: from SIGTERM to SIGKILL.
        in_turn: stop the daemons one after the other, the last launched first; else all at once.
        after_stop: the owner's own cleanup once its daemons are gone.
    """

    def __init__(
        self,
        what: str,
        state_file: Path,
        logs: Path,
        timeout_setting: str,
        timeout_s: float,
        describe: Callable[[], dict[str, Any]] = dict,
        grace_s: float = GRACE_S,
        in_turn: bool = False,
        after_stop: Callable[[], None] | None = None,
    ) -> None:
        self.what, self.state_file, self.logs = what, state_file, logs
        self.timeout_setting, self.timeout_s = timeout_setting, timeout_s
        self.describe, self.grace_s, self.in_turn, self.after_stop = describe, grace_s, in_turn, after_stop
        self.daemons: list[Daemon] = []

    def launch(
        self,
        role: str,
        args: Sequence[str],
        log: Path,
        env: dict[str, str] | None = None,
        death_signal: int | None = None,
    ) -> Daemon:
        """Start `args` in a session of its own, its output appended to `log`, and record it.

        `death_signal`: what the kernel sends it when this process dies (PR_SET_PDEATHSIG);
        None lets it outlive a killed driver until the next `sweep`.
        """
        with log.open("ab") as out:
            proc = subprocess.Popen(
                list(args),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent(death_signal) if death_signal is not None else None,
            )
        daemon = Daemon(role, proc, log, start_ticks(proc.pid))
        self.daemons.append(daemon)
        _hold(self)
        self.save()
        return daemon

    def records(self) -> list[dict[str, Any]]:
        return [d.record() for d in self.daemons]

    def save(self) -> None:
        """Write the state file: the driver, the owner's record, the daemons."""
        write_json(self.state_file, {"driver": driver(), **self.describe(), "processes": self.records()})

    def check(self) -> None:
        """Fail when a daemon has exited.

        Raises:
            UserError: naming the daemon, its status, the last error line of its log, and the log.
        """
        for d in self.daemons:
            if d.proc.poll() is not None:
                raise UserError(
                    f"{self.what}: the {d.role} exited while starting "
                    f"(status {d.proc.returncode}): {d.why()} (log: {d.log})"
                )

    def not_ready(self, waiting_for: str) -> str:
        """The message for `waiting_for` still not ready when the start's time is up."""
        return (
            f"{self.what}: {waiting_for} not ready within {self.timeout_setting}={self.timeout_s:g} s; "
            f"see the logs in {self.logs}"
        )

    def wait(self, waiting_for: str, ready: Callable[[], Any], deadline: float | None = None) -> Any:
        """Poll `ready()` until it returns something true, and return that.

        Args:
            waiting_for: what messages call it ("the master", "radosgw").
            ready: the owner's readiness check.
            deadline: a `time.monotonic()` value; None: `timeout_s` from now.

        Raises:
            UserError: a daemon exited (`check`), or the deadline passed.
        """
        deadline = time.monotonic() + self.timeout_s if deadline is None else deadline
        while True:
            self.check()
            found = ready()
            if found:
                return found
            if time.monotonic() > deadline:
                raise UserError(self.not_ready(waiting_for))
            time.sleep(POLL_S)

    def drop(self, role: str) -> None:
        """Stop the daemons of `role` that still run (and what they started), and forget them,
        so that one can be launched again in their place."""
        gone = [d for d in self.daemons if d.role == role]
        terminate([Proc(d.proc.pid, d.started) for d in gone], [d.proc for d in gone], self.grace_s)
        self.daemons = [d for d in self.daemons if d.role != role]
        self.save()

    def stop(self) -> None:
        """Stop every daemon (and what it started), forget them, delete the state file."""
        daemons = list(reversed(self.daemons))
        terminate(
            [Proc(d.proc.pid, d.started) for d in daemons],
            [d.proc for d in daemons],
            self.grace_s,
            self.in_turn,
        )
        self.daemons.clear()
        self.state_file.unlink(missing_ok=True)
        _release(self)
        if self.after_stop is not None:
            self.after_stop()


def sweep(
    state_file: Path,
    is_ours: Callable[[int, dict[str, Any]], bool],
    grace_s: float = GRACE_S,
    in_turn: bool = False,
) -> dict[str, Any] | None:
    """Stop what a state file records once the driver that wrote it is gone; delete the file.

    Args:
        state_file: a supervisor's state file.
        is_ours: whether a pid's command line is one of the owner's daemons, given the state.
        grace_s, in_turn: as the supervisor that wrote it stops its daemons.

    Returns:
        The state, with "stopped": the pids signalled; None when its driver still runs (its
        daemons are in use) or the file is missing or unreadable.
    """
    try:
        state = json.loads(state_file.read_text())
        if isinstance(state, list):  # an older icelab's record: the processes alone
            state = {"processes": state}
        entries = [(int(p["pid"]), p.get("started")) for p in state["processes"]]
        gone = state.get("driver") is None or not Proc(**state["driver"]).running()
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # half written by a live driver, or not ours
    if not gone:
        return None
    # A record without start times (an older icelab's) is bound to the process its pid runs now.
    found = [Proc(pid, started if started is not None else start_ticks(pid)) for pid, started in entries]
    ours = [p for p in reversed(found) if p.running() and is_ours(p.pid, state)]
    terminate(ours, grace_s=grace_s, in_turn=in_turn)
    state_file.unlink(missing_ok=True)
    return {**state, "stopped": [p.pid for p in ours]}


# -- every exit path ---------------------------------------------------------------------------

_live: list[Supervisor] = []  # supervisors with daemons running, in the order they started
_handlers: dict[int, Any] = {}  # the signal handlers `_catch_signals` replaced
_stop_at_exit = False  # stop_all is registered with atexit once per process


def stop_all() -> None:
    """Stop every supervisor's daemons, the last started first."""
    for supervisor in reversed(list(_live)):
        supervisor.stop()


def _hold(supervisor: Supervisor) -> None:
    global _stop_at_exit
    if supervisor in _live:
        return
    _live.append(supervisor)
    if not _stop_at_exit:
        atexit.register(stop_all)
        _stop_at_exit = True
    _catch_signals()


def _release(supervisor: Supervisor) -> None:
    if supervisor in _live:
        _live.remove(supervisor)
    if not _live:
        _restore_signals()


def _on_signal(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # as Ctrl-C: the run ends interrupted, every `finally` runs


def _catch_signals() -> None:
    """SIGTERM and SIGHUP end the run like Ctrl-C while daemons run (the measuring loop's own
    handler, icelab.bench.protocol, first finishes the measurement in flight)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if sig not in _handlers:
            _handlers[sig] = signal.signal(sig, _on_signal)


def _restore_signals() -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    for sig, handler in list(_handlers.items()):
        signal.signal(sig, handler)
        del _handlers[sig]
