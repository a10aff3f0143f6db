"""Every chart of the study from stored results only: the newest complete run of each
experiment, or the runs named.

icelab charts                                # results/runs + results/reference -> results/charts
icelab charts --results results/reference    # the committed set -> results/reference/charts
icelab charts --run canonical=<run_id> --out /tmp/charts
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from icelab.charts import Chart, canonical, costmodel, expiry, health, planning, schema_table
from icelab.core.runs import Run, select_runs

# experiment.task -> what draws its charts into a directory.
WRITERS: dict[str, Callable[[Path, Path], list[Chart]]] = {
    "planning": planning.charts,
    "canonical": canonical.charts,
    "manifest_health": health.charts,
    "doctor": health.charts,
    "snapshot_expiry": expiry.charts,
    "schema_evolution": schema_table.charts,
    "metadata_scale": costmodel.charts,
    "costmodel_calibrate": costmodel.charts,
}
DRAWN = (".png", ".svg", ".md", ".html")


def chart_runs(results: Path, named: dict[str, str], include_incomplete: bool = False) -> dict[str, Run]:
    """The run to chart per experiment (only experiments whose task has charts)."""
    runs = select_runs(results, named, include_incomplete)
    unknown = [e for e in named if runs[e].task not in WRITERS]
    if unknown:
        raise ValueError(f"no charts for experiment(s) {unknown}: tasks with charts are {sorted(WRITERS)}")
    return {e: r for e, r in runs.items() if r.task in WRITERS}


def draw(runs: dict[str, Run], out: Path) -> dict[str, list[Chart]]:
    """Every chart of every run, into `out/<experiment>/` (its old charts removed first)."""
    drawn = {}
    for experiment, run in runs.items():
        dest = out / experiment
        dest.mkdir(parents=True, exist_ok=True)
        for old in dest.iterdir():
            if old.suffix in DRAWN:  # a run with fewer charts must not leave the last run's behind
                old.unlink()
        drawn[experiment] = WRITERS[run.task](run.path, dest)
    return drawn


def parse_named(items: list[str]) -> dict[str, str]:
    """`experiment=run_id` items as a dict."""
    named = {}
    for item in items:
        experiment, sep, run_id = item.partition("=")
        if not sep or not experiment or not run_id:
            raise ValueError(f"bad --run '{item}': use <experiment>=<run_id>")
        named[experiment] = run_id
    return named


def parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """Options shared by the commands that read a whole results directory."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument(
        "--results",
        type=Path,
        default=Path("results"),
        help="a results directory: runs under <results>/runs/ and <results>/reference/, or <results>/ itself",
    )
    p.add_argument(
        "--run",
        action="append",
        metavar="EXPERIMENT=RUN_ID",
        help="chart this run of the experiment instead of its newest (repeatable)",
    )
    p.add_argument("--include-incomplete", action="store_true", help="also consider runs not complete")
    return p


def results_command(
    prog: str,
    description: str | None,
    default_out: str,
    out_what: str,
    argv: list[str] | None,
    act: Callable[[dict[str, Run], Path, Path], int],
) -> int:
    """Parse a results command's options (the shared ones and `--out`, which `out_what` names), then
    `act(runs, out, results)`: the runs they choose, where the output goes (`<results>/<default_out>`
    unless `--out`) and the results directory. 2 (after one line on stderr) when no run is chosen."""
    p = parser(prog, description)
    p.add_argument("--out", type=Path, help=f"{out_what} (default: <results>/{default_out})")
    args = p.parse_args(argv)
    runs = runs_from_args(args)
    if runs is None:
        return 2
    return act(runs, args.out or args.results / default_out, args.results)


def runs_from_args(args: argparse.Namespace) -> dict[str, Run] | None:
    """The runs the shared options choose; None (after one line on stderr) when there are none."""
    try:
        runs = chart_runs(args.results, parse_named(args.run or []), args.include_incomplete)
    except (ValueError, FileNotFoundError) as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return None
    if not runs:
        print(f"icelab: error: no complete run with charts under {args.results}", file=sys.stderr)
        return None
    return runs


def main(argv: list[str] | None = None) -> int:
    """Regenerate every chart from stored results (no Spark)."""
    return results_command("icelab charts", main.__doc__, "charts", "where the charts go", argv, _draw)


def _draw(runs: dict[str, Run], out: Path, _results: Path) -> int:
    """Draw every chosen run's charts into `out`, one line per experiment and a total."""
    drawn = draw(runs, out)
    for experiment, charts in drawn.items():
        run = runs[experiment]
        files = sum(len(c.files) for c in charts)
        print(f"{experiment:<17} {run.run_id} ({run.status}): {len(charts)} charts, {files} files")
    total = sum(len(c.files) for charts in drawn.values() for c in charts)
    print(f"charts: {total} files for {len(drawn)} experiments in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
