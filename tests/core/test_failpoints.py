"""Failpoints that kill a process the run started, not the run itself (`@<program>`)."""

from __future__ import annotations

import os
import signal
import subprocess

from icelab.core import failpoints

# How long a SIGKILLed child may take to end. In one CI run, beside three busy test workers, a
# `sleep` just started and killed had not ended 10 s later (why, not found). The `sleep` outlives
# this bound, so a kill that never comes still fails.
KILLED_S = 120


def test_a_kill_at_a_program_kills_that_child_and_not_the_run(monkeypatch):
    target = subprocess.Popen(["sleep", "600"])
    other = subprocess.Popen(["tail", "-f", "/dev/null"])
    try:
        monkeypatch.setenv(failpoints.ENV, "test.outage:2@sleep")
        failpoints.point("test.outage")  # the first arrival: not the chosen one
        assert target.poll() is None
        failpoints.point("test.outage")
        assert target.wait(timeout=KILLED_S) == -signal.SIGKILL
        assert other.poll() is None  # only the named program
    finally:
        for proc in (target, other):
            proc.kill()
            proc.wait()


def test_a_kill_at_several_arrivals_kills_at_each(monkeypatch):
    procs = [subprocess.Popen(["sleep", "600"])]
    try:
        monkeypatch.setenv(failpoints.ENV, "test.losses:1,3@sleep")
        failpoints.point("test.losses")
        assert procs[0].wait(timeout=KILLED_S) == -signal.SIGKILL
        procs.append(subprocess.Popen(["sleep", "600"]))
        failpoints.point("test.losses")  # the second arrival: not chosen
        assert procs[1].poll() is None
        failpoints.point("test.losses")
        assert procs[1].wait(timeout=KILLED_S) == -signal.SIGKILL
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_a_pause_names_its_processes(monkeypatch):
    from icelab.core.failpoints import _PAUSE, _pids

    spec = _PAUSE.fullmatch("protocol.measurement:40+0.2@radosgw/60")
    assert spec is not None and (spec["nth"], spec["delay"], spec["target"], spec["seconds"]) == (
        "40",
        "0.2",
        "radosgw",
        "60",
    )
    assert _pids("driver") == [os.getpid()]
    assert _pids("no-such-program") == []
