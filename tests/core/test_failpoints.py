"""Failpoints that kill a process the run started, not the run itself (`@<program>`)."""

from __future__ import annotations

import signal
import subprocess

from icelab.core import failpoints


def test_a_kill_at_a_program_kills_that_child_and_not_the_run(monkeypatch):
    target = subprocess.Popen(["sleep", "60"])
    other = subprocess.Popen(["tail", "-f", "/dev/null"])
    try:
        monkeypatch.setenv(failpoints.ENV, "test.outage:2@sleep")
        failpoints.point("test.outage")  # the first arrival: not the chosen one
        assert target.poll() is None
        failpoints.point("test.outage")
        assert target.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None  # only the named program
    finally:
        for proc in (target, other):
            proc.kill()
            proc.wait()
