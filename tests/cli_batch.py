"""`python run.py <args>` for many argument lists in one interpreter, as a user runs it.

Each case runs `run.py` as `__main__` (runpy) with its own `sys.argv`, environment, stdout and
stderr; the exit status is that of its SystemExit. One process for all of them spares a Python
start and icelab's imports per case (about 3.5 s each). Reads a JSON list of cases on stdin, each
{"args": [...], "env": {name: value, or null to unset}} (env: changes to this process's
environment for that case only); prints a JSON list of {"code", "stdout", "stderr"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN_PY = str(REPO / "run.py")


@contextlib.contextmanager
def environment(changes: dict[str, str | None]) -> Iterator[None]:
    """This process's environment with `changes` applied (None unsets), restored afterwards."""
    saved = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_batch(cases: list[dict]) -> list[subprocess.CompletedProcess]:
    """Each case ({"args", "env"}) run by `run.py` in one child process, from the repository
    root: its outcome, as if it had run alone."""
    proc = subprocess.run(
        [sys.executable, __file__],
        input=json.dumps(cases),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [
        subprocess.CompletedProcess(case["args"], o["code"], o["stdout"], o["stderr"])
        for case, o in zip(cases, json.loads(proc.stdout), strict=True)
    ]


def main() -> None:
    results = []
    for case in json.load(sys.stdin):
        out, err = io.StringIO(), io.StringIO()
        code = 0
        sys.argv = [RUN_PY, *case["args"]]
        with (
            environment(case.get("env", {})),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                runpy.run_path(RUN_PY, run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    json.dump(results, sys.__stdout__)


if __name__ == "__main__":
    main()
