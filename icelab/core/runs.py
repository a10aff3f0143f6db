"""Finding stored runs, wherever they sit under a results directory.

Two layouts hold runs: `results/runs/<experiment>/<run_id>/` (what `run.py` writes, not in git)
and `results/reference/<experiment>/<run_id>/` (the committed reference set). Given a results
directory, both are searched, and so is the directory itself, so `results/reference` (or a test
fixture laid out like it) can be named directly.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from icelab.core import run_state

# Runs written before every task wrote run.json: their last file marks a run that finished.
FINAL_FILES = {"manifest_health": "report.json", "snapshot_expiry": "expiry.json", "doctor": "report.json"}


@dataclass(frozen=True)
class Run:
    """One stored run directory."""

    path: Path
    experiment: str  # the directory it sits in: manifest_8mb, canonical, ...
    task: str  # experiment.task of its config: planning, canonical, ...
    status: str  # run.json's status (icelab.core.run_state); without one, complete when the last file exists

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def env(self) -> dict:
        """The run's env.json (empty when absent)."""
        return _json(self.path / "env.json")

    def config(self) -> dict:
        """The run's resolved config.yaml (empty when absent)."""
        path = self.path / "config.yaml"
        # libyaml's loader when PyYAML has it: the docs and report read hundreds of these.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return (yaml.load(path.read_text(), Loader=loader) or {}) if path.is_file() else {}

    def meta(self) -> dict:
        """The run's run.json (empty when absent)."""
        return _json(self.path / "run.json")


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


@functools.lru_cache(maxsize=4096)
def _task(config: Path, mtime_ns: int, size: int) -> str | None:
    """experiment.task of a run's config.yaml, parsed once per content: a docs render lists the
    stored runs dozens of times (about 1,500 parses, 2 s of a 3 s render, before this cache)."""
    return (Run(config.parent, "", "", "").config().get("experiment") or {}).get("task")


def read_run(path: Path) -> Run | None:
    """The run stored at `path`, or None when `path` is not a run directory."""
    if not path.is_dir() or not ((path / "config.yaml").is_file() or (path / "run.json").is_file()):
        return None
    run = Run(path, path.parent.name, "", "")
    config = path / "config.yaml"
    stat = config.stat() if config.is_file() else None
    task = _task(config, stat.st_mtime_ns, stat.st_size) if stat else None
    task = task or run.experiment
    status = run_state.status(path)  # a killed run's "running" reads "abandoned"
    if status is None:
        final = FINAL_FILES.get(task)
        status = "complete" if final and (path / final).is_file() else "unknown"
    return Run(path, run.experiment, task, status)


def roots(results: Path) -> list[Path]:
    """The directories under `results` whose children are experiment directories."""
    return [p for p in (results / "runs", results / "reference", results) if p.is_dir()]


def run_dirs(results: Path) -> list[Path]:
    """Every directory one level inside an experiment directory under `results`, in both
    layouts (each once): the places a run can be, whether or not one is there."""
    found: dict[Path, Path] = {}
    for root in roots(results):
        for experiment in sorted(p for p in root.iterdir() if p.is_dir()):
            for path in sorted(p for p in experiment.iterdir() if p.is_dir()):
                found.setdefault(path.resolve(), path)
    return list(found.values())


# What read_run raises when a run.json or config.yaml does not parse (JSONDecodeError is a ValueError).
UNREADABLE_ERRORS = (ValueError, yaml.YAMLError, OSError)


def find_runs(results: Path) -> list[Run]:
    """Every run under `results`, in both layouts, sorted by experiment then run id (oldest first).

    A run whose run.json or config.yaml does not parse is listed with status "unreadable", so
    it is skipped like any incomplete run (and `icelab.tools.validate` names it), rather than stopping
    every reader.
    """
    runs = [run for run in map(load_run, run_dirs(results)) if run is not None]
    return sorted(runs, key=lambda r: (r.experiment, r.run_id))


def load_run(path: Path) -> Run | None:
    """`read_run`, with a run whose run.json or config.yaml does not parse given status "unreadable"."""
    try:
        return read_run(path)
    except UNREADABLE_ERRORS:
        return Run(path, path.parent.name, "", "unreadable")


def latest_runs(runs: list[Run], include_incomplete: bool = False) -> dict[str, Run]:
    """Per experiment, its newest run (run ids start with a UTC timestamp); complete ones only
    unless `include_incomplete`."""
    latest: dict[str, Run] = {}
    for run in runs:
        if run.complete or include_incomplete:
            latest[run.experiment] = run  # sorted oldest first: the last one wins
    return latest


def select_runs(results: Path, named: dict[str, str], include_incomplete: bool = False) -> dict[str, Run]:
    """The newest run of each experiment under `results`, with `named` ({experiment: run id})
    taking that run instead; a named run that does not exist is an error."""
    runs = find_runs(results)
    chosen = latest_runs(runs, include_incomplete)
    for experiment, run_id in named.items():
        match = [r for r in runs if r.experiment == experiment and r.run_id == run_id]
        if not match:
            raise FileNotFoundError(f"no run {experiment}/{run_id} under {results}")
        chosen[experiment] = match[0]
    return dict(sorted(chosen.items()))


def find_run(results: Path, ref: str, include_incomplete: bool = False) -> Run:
    """A run named by its directory (whatever its status), by an experiment directory (its newest
    complete run, or newest of any status with `include_incomplete`) or by its run id (searched
    under `results`)."""
    path = Path(ref)
    run = load_run(path)
    if run is not None:
        return run
    if path.is_dir():
        inside = [r for r in map(load_run, sorted(path.iterdir())) if r is not None]
        chosen = [r for r in inside if r.complete or include_incomplete]
        if chosen:
            return chosen[-1]
        what = "no run" if include_incomplete or not inside else f"no complete run ({len(inside)} incomplete)"
        raise FileNotFoundError(f"{what} under {path}")
    match = [r for r in find_runs(results) if r.run_id == ref]
    if not match:
        raise FileNotFoundError(f"no run '{ref}' (a run directory or a run id under {results})")
    return match[-1]


def run_parser(prog: str, description: str | None, incomplete_flag: bool = True) -> argparse.ArgumentParser:
    """Argument parser of a command that reads one stored run (see `resolve_run`)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "path",
        type=Path,
        help="a run directory, an experiment directory (its newest complete run) or a run id under results/",
    )
    if incomplete_flag:
        parser.add_argument(
            "--include-incomplete",
            action="store_true",
            help="from an experiment directory, take the newest run whatever its status",
        )
    return parser


def resolve_run(path: Path, include_incomplete: bool = False, results: Path = Path("results")) -> Run | None:
    """The run a command was given (`find_run`); None after one line on stderr when there is none.

    A run that is not complete is still returned (it was named, or asked for), with a warning.
    """
    try:
        run = find_run(results, str(path), include_incomplete)
    except FileNotFoundError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return None
    if not run.complete:
        print(f"icelab: warning: {run.path} is not complete (status {run.status!r})", file=sys.stderr)
    return run
