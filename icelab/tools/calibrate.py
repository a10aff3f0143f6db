"""`icelab costmodel calibrate`: calibrate the planning cost model on an engine and storage.

    icelab costmodel calibrate                                   # local engine, local disk
    icelab costmodel calibrate --engine standalone
    icelab costmodel calibrate --storage object --latency-ms 20  # the store, 20 ms added
    icelab costmodel calibrate --from results/runs/costmodel_calibrate/<run_id>   # no benchmark

It runs `python run.py experiment=costmodel_calibrate engine=... storage=...` (extra Hydra
overrides after `--`; on a store `experiment=costmodel_calibrate_store`, states up to 200,000
entries built on the store from the tiny dataset on local disk, `paths.copy_from`),
which measures a short ladder of metadata states and stores the fit in
results/calibrations/<engine>-<storage>-<latency>ms.json; `--from` makes the calibration of a
run already stored instead. `icelab costmodel` and the doctor use the calibration of the engine
and storage they are asked about (docs/costmodel.md, "Calibration").

Exit status: the run's; 2 for bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from icelab.analysis import calibration
from icelab.core.errors import OneLineParser, UserError
from icelab.core.provenance import REPO
from icelab.core.runs import Run, read_run


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = OneLineParser(
        prog="icelab costmodel calibrate",
        description="Measure a short ladder of metadata states on an engine and storage, fit the planning "
        "cost model and store it as a calibration (exit 2: bad input).",
    )
    p.add_argument(
        "--engine", default="local", help="engine config: local or standalone (default %(default)s)"
    )
    p.add_argument("--storage", default="local", help="storage config: local or object (default %(default)s)")
    p.add_argument("--latency-ms", help="round trip added to the store (storage=object), in ms")
    p.add_argument("--from", dest="source", type=Path, help="make the calibration of this stored run instead")
    p.add_argument(
        "--into",
        type=Path,
        default=Path("results") / calibration.MADE,
        help="where --from writes the calibration (default %(default)s)",
    )
    p.add_argument("overrides", nargs="*", help="further Hydra overrides for the run, after --")
    return p


def command(args: argparse.Namespace) -> list[str]:
    """The run.py command line that measures and stores the calibration."""
    # On a store, a ladder that fits in 10 minutes at +20 ms (conf/experiment/costmodel_calibrate_store.yaml).
    experiment = "costmodel_calibrate_store" if args.storage == "object" else "costmodel_calibrate"
    line = [sys.executable, str(REPO / "run.py"), f"experiment={experiment}"]
    line += [f"engine={args.engine}", f"storage={args.storage}"]
    if args.latency_ms is not None:
        line.append(f"storage.latency_ms={args.latency_ms}")
    return line + list(args.overrides)


def made_in(run: Run) -> float | None:
    """How long the run took to calibrate (building its states, measuring, fitting), from the
    calibration it made itself when that lies beside it (<results>/calibrations/, the run being
    <results>/runs/<experiment>/<id>); None when it does not."""
    made = run.path.parent.parent.parent / calibration.MADE
    for path in sorted(made.glob("*.json")) if made.is_dir() else []:
        try:
            provenance = json.loads(path.read_text()).get("provenance") or {}
        except (OSError, ValueError):
            continue
        if provenance.get("run_id") == run.run_id and provenance.get("calibrate_s") is not None:
            return float(provenance["calibrate_s"])
    return None


def from_run(source: Path, into: Path) -> Path:
    """The calibration of a stored run, written under `into`.

    Raises:
        UserError: when `source` is no run or cannot be fitted.
    """
    found = read_run(source)
    if found is None:
        raise UserError(f"{source}: not a run directory")
    try:
        return calibration.write(calibration.record(found, wall_s=made_in(found)), into)
    except ValueError as exc:
        raise UserError(f"{source}: no calibration: {exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Calibrate; the run's exit status, or 2 after one line on stderr for bad input."""
    try:
        args = parser().parse_args(argv)
        if args.source is not None:
            if args.latency_ms is not None or args.overrides:
                raise UserError("--from makes the calibration of a stored run: it takes no run settings")
            path = from_run(args.source, args.into)
            print(f"{calibration.read(path).describe()}: wrote {path}")
            return 0
        if args.storage == "local" and args.latency_ms not in (None, "0"):
            raise UserError("--latency-ms is a delay added to the store: give it with --storage object")
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    return subprocess.run(command(args), check=False).returncode
