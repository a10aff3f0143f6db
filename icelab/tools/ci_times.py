"""`python -m icelab.tools.ci_times LOG --commit HASH --dest DIR`: store what one `.ci/run` took.

`.ci/run` prints `install: N s`, `tests: N s`, `tutorials: N s` and `ci total: N s` (each since
its start) and pytest's `N passed ... in S s` line. This reads them from the log, and writes
`DIR/ci.json` with the commit the clone was of and this machine's provenance, beside a copy of
the log: docs/prerequisites.md's setup and test times are generated from it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from icelab.core.provenance import machine

STEPS = {"install": "install_s", "tests": "tests_s", "tutorials": "tutorials_s", "ci total": "total_s"}
STEP = re.compile(r"^(?P<step>install|tests|tutorials|ci total): (?P<s>\d+) s$", re.M)
PYTEST = re.compile(r"^(?P<passed>\d+) passed\b.* in (?P<s>[\d.]+)s\b", re.M)


class NotACiLog(ValueError):
    """A log without the lines of a whole `.ci/run`."""


def parse(text: str) -> dict[str, Any]:
    """The steps' seconds since CI's start, and pytest's passed count and its own seconds.

    Raises:
        NotACiLog: when a step's line or pytest's summary is missing (CI failed or was cut short).
    """
    found = {STEPS[m["step"]]: int(m["s"]) for m in STEP.finditer(text)}
    tests = PYTEST.search(text)
    missing = [step for step, key in STEPS.items() if key not in found] + ([] if tests else ["pytest"])
    if missing:
        raise NotACiLog(f"no {', '.join(missing)} line: not the log of a whole .ci/run")
    return {**found, "passed": int(tests["passed"]), "pytest_s": float(tests["s"])}


def record(log: Path, commit: str, dest: Path) -> Path:
    """Write `dest`/ci.json (the times, the commit, this machine) and copy the log beside it."""
    times = parse(log.read_text(errors="replace"))
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(log, dest / "ci.log")
    out = dest / "ci.json"
    out.write_text(json.dumps({"commit": commit, "machine": machine(), **times}, indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m icelab.tools.ci_times", description=__doc__.splitlines()[0])
    p.add_argument("log", type=Path, help="the console output of one `.ci/run`")
    p.add_argument("--commit", required=True, help="the commit the fresh clone was of (full hash)")
    p.add_argument("--dest", type=Path, required=True, help="e.g. results/reference/ci/<date>")
    args = p.parse_args(argv)
    try:
        print(record(args.log, args.commit, args.dest))
    except (OSError, NotACiLog) as e:
        print(f"ci_times: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
