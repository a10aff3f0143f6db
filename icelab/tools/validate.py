"""Every run under a results directory checked against what its experiment must leave behind.

icelab validate results               # results/runs/ and results/reference/
icelab validate results/reference --all

Measuring runs (tasks planning and canonical) are checked against the results contract
(`icelab.core.contract.validate`); the others for their files and a complete status. One line names
each broken run and why, one each valid run written under an older contract (it lacks columns
the contract gained since, which every reader fills with nulls), then a summary; the exit status
is 1 when any run is broken.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from icelab.core import run_state
from icelab.core.contract import MEASUREMENTS, missing_columns, validate
from icelab.core.runs import UNREADABLE_ERRORS, load_run, read_run, run_dirs

MEASURING = ("planning", "canonical")
# What a finished run of each other task holds (new_run_dir writes env.json and config.yaml first).
REQUIRED = {
    "datagen": ("env.json", "config.yaml", "summary.json"),
    "verify": ("env.json", "config.yaml", "verification.json"),
    "manifest_health": ("env.json", "config.yaml", "report.json", "partitions.parquet", "manifests.parquet"),
    "doctor": ("env.json", "config.yaml", "report.json", "partitions.parquet", "manifests.parquet"),
    "snapshot_expiry": ("env.json", "config.yaml", "expiry.json", "timeline.parquet"),
    "schema_evolution": ("env.json", "config.yaml", "run.json", "scenarios.parquet"),
}
BASIC = ("env.json", "config.yaml")
# A run directory's name (results.new_run_dir): one with nothing inside is a run that died starting.
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


@dataclass
class Verdict:
    """What the validator found in one run directory."""

    problems: list[str] = field(default_factory=list)  # empty: the run is complete and valid
    older: list[str] = field(default_factory=list)  # contract columns a valid older run lacks


def check_run(path: Path, allow_failures: bool = False) -> Verdict:
    """Everything wrong with the run stored at `path`."""
    try:
        run = read_run(path)
    except UNREADABLE_ERRORS as exc:
        return Verdict([f"unreadable run.json or config.yaml: {_first_line(exc)}"])
    if run is None:
        return Verdict(["no run.json or config.yaml: the run stopped as it started"])
    try:
        if run.task in MEASURING or (path / MEASUREMENTS).is_file():
            # A run written before the contract gained a column is read with it as nulls by
            # every reader, so it is not broken; it is reported as older.
            problems = validate(path, allow_failures, allow_older=True)
            if run.status != "complete" and not any("run status" in p for p in problems):
                problems.insert(0, run_state.not_complete(run.status))  # e.g. killed before any flush
            stored = path / MEASUREMENTS
            older = (missing_columns(pq.read_schema(stored)) or []) if stored.is_file() else []
            return Verdict(problems, older)
        return Verdict(_check_files(path, run.task, run.status))
    except (*UNREADABLE_ERRORS, pa.ArrowException) as exc:
        return Verdict([f"unreadable file: {_first_line(exc)}"])


def _check_files(path: Path, task: str, status: str) -> list[str]:
    problems = []
    missing = [f for f in REQUIRED.get(task, BASIC) if not (path / f).is_file()]
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    if status != "complete":
        problems.append(run_state.not_complete(status))
    for file in sorted(path.glob("*.json")):
        try:
            json.loads(file.read_text())
        except ValueError as exc:
            problems.append(f"unreadable {file.name}: {_first_line(exc)}")
    verification = path / "verification.json"
    if task == "verify" and verification.is_file() and not json.loads(verification.read_text()).get("ok"):
        problems.append("verification.json: the tables differ")
    return problems


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def candidates(results: Path) -> list[Path]:
    """Run directories under `results`: those read_run accepts (or fails to read), and any empty
    directory named like a run id; `results` alone when it is itself a run's directory."""
    if load_run(results) is not None:
        return [results]
    return [p for p in run_dirs(results) if load_run(p) is not None or RUN_ID.fullmatch(p.name)]


def main(argv: list[str] | None = None) -> int:
    """Check every run under a results directory (or one run directory); exit 1 when any is broken."""
    p = argparse.ArgumentParser(prog="icelab validate", description=main.__doc__)
    p.add_argument(
        "results",
        type=Path,
        nargs="?",
        default=Path("results"),
        help="default: results; or one run's directory",
    )
    p.add_argument("--allow-failures", action="store_true", help="failed queries are not a breach")
    p.add_argument("--all", action="store_true", help="also print a line for every valid run")
    args = p.parse_args(argv)
    paths = candidates(args.results) if args.results.is_dir() else []
    if not paths:
        print(f"icelab: error: no run directories under {args.results}", file=sys.stderr)
        return 2
    broken = older = 0
    for path in paths:
        verdict = check_run(path, args.allow_failures)
        name = (
            path.relative_to(args.results)
            if path != args.results and path.is_relative_to(args.results)
            else path
        )
        if verdict.problems:
            broken += 1
            print(f"broken  {name}: {'; '.join(verdict.problems)}")
        elif verdict.older:
            older += 1
            print(f"older   {name}: valid; written before the contract's columns {', '.join(verdict.older)}")
        elif args.all:
            print(f"ok      {name}")
    print(
        f"validate: {len(paths)} runs under {args.results}: {len(paths) - broken} valid "
        f"({older} under an older contract), {broken} broken"
    )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
