"""A B A B sessions: settings that need a new JVM (driver flags, memory, jars), measured in
alternating processes, each side in several sessions, then compared with the sessions pooled.

icelab sessions --a OVERRIDE [--a ...] --b OVERRIDE [--b ...] [--pairs 2] [--variants A B]
                [--results results] -- <the run's overrides>

Each session is `python run.py <the run's overrides> <a's or b's overrides>` in a process of its
own, in the order A B A B ...; a multirun cannot do this (its jobs share one driver JVM). What
ran, in which order, and which run each session wrote go to results/sessions/<id>.json after
every session, so an interrupted series keeps what it measured. At the end `icelab compare
a1,a2,... b1,b2,...` pools each side and pairs the sessions in order (icelab/analysis/effect_intervals.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from icelab.core.results import write_json

RUN_PY = Path(__file__).resolve().parents[2] / "run.py"
SIDES = ("a", "b")


def schedule(pairs: int) -> list[str]:
    """The sessions' order: `pairs` times A then B, so drift over the series hits both sides."""
    if pairs < 1:
        raise ValueError(f"--pairs must be at least 1, got {pairs}")
    return [side for _ in range(pairs) for side in SIDES]


def results_dir(overrides: Sequence[str], default: Path) -> Path:
    """Where the runs go: the last `paths.results_dir=` among the overrides, else `default`."""
    given = [o.split("=", 1)[1] for o in overrides if o.lstrip("+").startswith("paths.results_dir=")]
    return Path(given[-1]) if given else default


def run_paths(results: Path) -> set[Path]:
    """The run directories under results/runs/ (where every new run goes)."""
    return {p for p in (results / "runs").glob("*/*") if p.is_dir()}


def new_run(before: set[Path], results: Path) -> Path:
    """The one run directory a session added under `results`.

    Raises:
        RuntimeError: when the session added none or several (another run writing there).
    """
    added = sorted(run_paths(results) - before)
    if len(added) != 1:
        found = ", ".join(map(str, added)) or "none"
        raise RuntimeError(f"expected one new run under {results}, found {found}")
    return added[0]


def run_session(overrides: Sequence[str]) -> int:
    """One session: `python run.py <overrides>` in its own process (a fresh driver JVM)."""
    return subprocess.run([sys.executable, str(RUN_PY), *overrides], check=False).returncode


def main(argv: list[str] | None = None) -> int:
    """Run A B A B sessions of one experiment and compare the sides, sessions pooled."""
    p = argparse.ArgumentParser(prog="icelab sessions", description=main.__doc__)
    p.add_argument("--a", action="append", default=[], metavar="OVERRIDE", help="side A's overrides")
    p.add_argument("--b", action="append", default=[], metavar="OVERRIDE", help="side B's overrides")
    p.add_argument("--pairs", type=int, default=2, help="A B pairs of sessions (default 2: A B A B)")
    p.add_argument("--variants", nargs=2, metavar=("A", "B"), help="passed to icelab compare")
    p.add_argument("--results", type=Path, default=Path("results"), help="results directory")
    p.add_argument("overrides", nargs="*", help="the run's overrides, after --")
    args = p.parse_args(argv)
    try:
        order = schedule(args.pairs)
    except ValueError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if not args.overrides:
        print("icelab: error: give the run's overrides after --, e.g. -- experiment=smoke", file=sys.stderr)
        return 2
    sides = {"a": args.a, "b": args.b}
    if sides["a"] == sides["b"]:
        print("icelab: error: --a and --b are the same; name what differs", file=sys.stderr)
        return 2
    results = results_dir(args.overrides, args.results)
    series_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    record_path = results / "sessions" / f"{series_id}.json"
    record: dict = {
        "started_utc": series_id,
        "overrides": args.overrides,
        "a": sides["a"],
        "b": sides["b"],
        "order": order,
        "sessions": [],
        "status": "running",
    }
    record_path.parent.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[str]] = {"a": [], "b": []}
    for i, side in enumerate(order, 1):
        overrides = [*args.overrides, *sides[side]]
        print(f"sessions: {i}/{len(order)} ({side.upper()}): python run.py {' '.join(overrides)}", flush=True)
        before = run_paths(results)
        began = time.monotonic()
        code = run_session(overrides)
        session = {"side": side, "exit": code, "seconds": round(time.monotonic() - began, 1)}
        if code == 0:
            try:
                session["run"] = str(new_run(before, results))
            except RuntimeError as exc:
                code, session["error"] = 1, str(exc)
        record["sessions"].append(session)
        if code != 0:
            record["status"] = "failed"
            write_json(record_path, record)
            why = session.get("error") or f"exited {code}"
            print(f"icelab: error: session {i} ({side.upper()}) {why}; see {record_path}", file=sys.stderr)
            return 1
        runs[side].append(session["run"])
        write_json(record_path, record)
    record["status"] = "complete"
    write_json(record_path, record)
    print(f"sessions: {record_path}")
    from icelab.tools import compare

    extra = ["--variants", *args.variants] if args.variants else []
    return compare.main([",".join(runs["a"]), ",".join(runs["b"]), "--results", str(results), *extra])


if __name__ == "__main__":
    sys.exit(main())
