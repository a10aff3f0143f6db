"""`python run.py <args>` for many argument lists in one interpreter, as a user runs it.

Each list runs `run.py` as `__main__` (runpy) with its own `sys.argv`, stdout and stderr; the
exit status is that of its SystemExit. One process for all of them spares a Python start and
icelab's imports per case (about 2 s each). Reads a JSON list of argument lists on stdin; prints
a JSON list of {"code", "stdout", "stderr"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
from pathlib import Path

RUN_PY = str(Path(__file__).resolve().parents[1] / "run.py")


def main() -> None:
    results = []
    for args in json.load(sys.stdin):
        out, err = io.StringIO(), io.StringIO()
        code = 0
        sys.argv = [RUN_PY, *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(RUN_PY, run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    json.dump(results, sys.__stdout__)


if __name__ == "__main__":
    main()
