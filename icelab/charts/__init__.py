"""Charts from stored results only: nothing here starts Spark or reads the data."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from icelab.core import run_state
from icelab.core.runs import resolve_run, run_parser


@dataclass
class Chart:
    """One drawn chart: its files (PNG and SVG), and what the report says under it."""

    title: str
    caption: str
    files: list[Path] = field(default_factory=list)

    @property
    def png(self) -> Path:
        return next(p for p in self.files if p.suffix == ".png")


def chart_files(charts: list[Chart]) -> list[Path]:
    """Every file of `charts`, in order."""
    return [path for chart in charts for path in chart.files]


def draw_charts(draw: bool, write: Callable[[Path], list[Path]], run_dir: Path) -> str:
    """Draw a finished run's charts unless the run's `charts=false`; what the console says of them.

    A run on a cluster or in a test may skip drawing: the charts come from the stored results
    alone, so `icelab charts` draws them later, identical.
    """
    if not draw:
        return "charts: not drawn (charts=false; `icelab charts` draws them from the results)"
    run_state.doing("charts")
    return f"charts: {', '.join(p.name for p in write(run_dir)) or 'none (nothing to chart)'}"


def chart_cli(
    prog: str, argv: list[str] | None, write: Callable[[Path], list[Path]], task: str | tuple[str, ...]
) -> int:
    """`prog <run dir | experiment dir | run id> [--include-incomplete]`: redraw a stored run's
    charts (an experiment's newest complete run unless asked otherwise), print their paths.

    Args:
        task: the experiment.task (or tasks) whose runs `write` draws (planning, canonical, ...).
    """
    parser = run_parser(prog, "Redraw a stored run's charts from its results (no Spark).")
    args = parser.parse_args(argv)
    run = resolve_run(args.path, args.include_incomplete)
    if run is None:
        return 2
    tasks = (task,) if isinstance(task, str) else task
    if run.task not in tasks:
        print(
            f"icelab: error: {run.path} is a {run.task} run; {prog} draws {' or '.join(tasks)} runs",
            file=sys.stderr,
        )
        return 2
    try:
        paths = write(run.path)
    except (KeyError, ValueError, IndexError, FileNotFoundError) as exc:
        if run.complete:
            raise  # a complete run that cannot be drawn is a bug, with its traceback
        # An incomplete run may lack what a chart needs (e.g. interrupted during warm-up).
        print(
            f"icelab: error: cannot draw {run.path} ({run.status}): {type(exc).__name__} {exc}",
            file=sys.stderr,
        )
        return 1
    for path in paths:
        print(path)
    return 0
