"""Charts from stored results only: nothing here starts Spark or reads the data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from icelab.contract import resolve_run, run_parser


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


def chart_cli(prog: str, argv: list[str] | None, write: Callable[[Path], list[Path]], marker: str) -> int:
    """`prog <results/runs/<experiment>[/<run_id>]>`: redraw a stored run's charts, print their paths."""
    parser = run_parser(prog, "Redraw a stored run's charts from its results (no Spark).")
    run_dir = resolve_run(parser.parse_args(argv).path, marker)
    if run_dir is None:
        return 2
    for path in write(run_dir):
        print(path)
    return 0
