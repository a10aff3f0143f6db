"""Copy chosen complete runs into the committed reference set, small files only, then redraw
its charts.

icelab reference results/runs/canonical/<run_id> results/runs/manifest_8mb/<run_id> ...

Each run lands in results/reference/<experiment>/<run_id>/ (the layout `icelab.charts.all --results
results/reference` reads), and the charts in results/reference/charts/<experiment>/.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import uuid
from fnmatch import fnmatch
from pathlib import Path

from icelab.core.results import copy_result
from icelab.core.runs import Run, read_run

# What a run's charts, report and comparison read. Not the partial jsonl, not the charts
# (redrawn from these), not anything large.
KEEP = (
    "measurements.parquet",
    "env.json",
    "config.yaml",
    "run.json",
    "*.csv",
    "answers.json",
    "outcomes.*",
    "scenarios.parquet",  # schema_evolution
    "partitions.parquet",  # manifest_health
    "manifests.parquet",
    "report.json",
    "timeline.parquet",  # snapshot_expiry
    "expiry.json",
    "catalogue.json",  # doctor_catalogue
    "calibration.json",  # doctor_catalogue: the calibration its doctor predicted with
    "remeasure*.json",  # doctor_catalogue: the fresh-process re-measure, and its jobs
    "summary.json",  # datagen: the dataset's build, its profile and verification
)
MAX_BYTES = 2 * 1024 * 1024


def small_files(run_dir: Path) -> list[Path]:
    """The files of a run the reference keeps; a kept file above MAX_BYTES is an error."""
    files = sorted(p for p in run_dir.iterdir() if p.is_file() and any(fnmatch(p.name, k) for k in KEEP))
    big = [f"{p.name} ({p.stat().st_size / 2**20:.1f} MB)" for p in files if p.stat().st_size > MAX_BYTES]
    if big:
        raise ValueError(f"{run_dir}: files above {MAX_BYTES // 2**20} MB: {', '.join(big)}")
    return files


def copy_run(run: Run, dest: Path) -> Path:
    """Copy a complete run's small files into `dest/<experiment>/<run_id>/` (replacing any copy),
    credentials redacted again (`copy_result`).

    The copy is made in a hidden sibling directory and renamed into place, so the reference set
    never holds half a run (the set is committed: a partial run there would be published).
    """
    if not run.complete:
        raise ValueError(f"{run.path}: run status is {run.status!r}, not 'complete'")
    files = small_files(run.path)
    target = dest / run.experiment / run.run_id
    staging = target.with_name(f".{run.run_id}.tmp-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    try:
        for path in files:
            copy_result(path, staging / path.name)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """Copy complete runs (small files only) into the reference set and redraw its charts."""
    p = argparse.ArgumentParser(prog="icelab reference", description=main.__doc__)
    p.add_argument("runs", nargs="+", type=Path, help="run directories: results/runs/<experiment>/<run_id>")
    p.add_argument("--dest", type=Path, default=Path("results/reference"), help="the reference set")
    p.add_argument("--no-charts", action="store_true", help="copy only, do not redraw the charts")
    args = p.parse_args(argv)
    runs = [read_run(path) for path in args.runs]
    missing = [str(path) for path, run in zip(args.runs, runs, strict=True) if run is None]
    if missing:
        print(f"icelab: error: not a run directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        # Check every run before copying any, so a refusal leaves the set as it was.
        for run in runs:
            if not run.complete:
                raise ValueError(f"{run.path}: run status is {run.status!r}, not 'complete'")
            small_files(run.path)
        for run in runs:
            target = copy_run(run, args.dest)
            size = sum(p.stat().st_size for p in target.iterdir())
            print(f"reference: {target} ({len(list(target.iterdir()))} files, {size / 1024:.0f} KB)")
    except ValueError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 1
    if args.no_charts:
        return 0
    from icelab.charts.all import main as charts  # matplotlib only when charts are drawn

    return charts(["--results", str(args.dest)])


if __name__ == "__main__":
    sys.exit(main())
