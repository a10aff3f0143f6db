"""Shared by the reliability tests: `python run.py` for real, on a micro dataset.

Each kill test runs the smoke benchmark with `ICELAB_KILL_AT` set (icelab/failpoints.py: the
process SIGKILLs itself at that point, or a moment later inside the Iceberg write that follows),
then runs the same command again without it. The second run must complete on its own, and what
the first one left must be marked incomplete, never reused or mixed in.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from icelab.core.contract import validate
from tests.conftest import FAST_JVM

REPO = Path(__file__).resolve().parents[1]
# Whatever a fault run prints, none of it is a traceback: Python's, Java's, or py4j's own.
TRACES = re.compile(r"Traceback \(most recent call last\)|^\s+at [\w$.]+\(|py4j\.|Py4J\w*Error", re.MULTILINE)
# The smoke benchmark shrunk to seconds: 2 queries x 2 windows x 2 variants x 2 rounds.
MICRO = [
    *FAST_JVM,
    "experiment=smoke",
    "dataset=tiny",
    "dataset.name=micro",
    "dataset.rows=3000",
    "dataset.span_days=8",
    "dataset.commits=3",
    "dataset.late_max_days=2",
    "experiment.queries=[count_window,nested_filter_window]",
    "experiment.windows=[1h,1d]",
    "experiment.ratio=[1d,1h]",
    "profile=[as_ingested]",
    "protocol.warmups=0",
    "protocol.repetitions=2",
    "protocol.executions=1",
    "protocol.overhead_pairs=0",
    "verify.duckdb=false",
    "engine.master='local[1]'",
    "engine.driver_memory=1g",
    "progress=false",
    "charts=false",  # drawn from the results alone; tests/charts draws them
]
PLANNED = 2 * 2 * 2 * 2


def command(tmp: Path, *extra: str, outputs: str = "outputs") -> list[str]:
    """`python run.py` on the micro smoke benchmark with data, results and Hydra's output under `tmp`."""
    paths = [f"paths.data_dir={tmp / 'data'}", f"paths.results_dir={tmp / 'results'}"]
    return [sys.executable, str(REPO / "run.py"), *MICRO, *paths, *extra, f"hydra.run.dir={tmp / outputs}"]


def run(tmp: Path, *extra: str, kill_at: str | None = None) -> subprocess.CompletedProcess:
    """Run the micro smoke benchmark to its end (or to the kill point `kill_at`)."""
    env = {k: v for k, v in os.environ.items() if k != "ICELAB_KILL_AT"}
    if kill_at:
        env["ICELAB_KILL_AT"] = kill_at
    return subprocess.run(
        command(tmp, *extra), cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )


def two_at_once(tmp: Path, *extra: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> list[str]:
    """Start the micro smoke benchmark twice at the same moment (in environment `env`, by default
    this one); both must succeed. What each printed (stdout, then stderr)."""
    procs = [
        subprocess.Popen(
            command(tmp, *extra, outputs=f"outputs{i}"),
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outs = ["".join(p.communicate(timeout=900)) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [out[-3000:] for out in outs]
    runs = smoke_runs(tmp)
    assert len(runs) == 2 and all(validate(r) == [] for r in runs)
    return outs


def smoke_runs(tmp: Path) -> list[Path]:
    runs = tmp / "results" / "runs" / "smoke"
    return sorted(runs.iterdir()) if runs.is_dir() else []


def dataset_dir(tmp: Path) -> Path:
    (found,) = (tmp / "data").glob("micro-*")
    return found


def assert_completes(tmp: Path, *extra: str) -> Path:
    """The same command again, without the kill: it completes and meets the contract."""
    proc = run(tmp, *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Nothing after the run's last line: no py4j call reaches the JVM once it is stopped.
    assert not TRACES.search(proc.stdout + proc.stderr), (proc.stdout + proc.stderr)[-3000:]
    newest = smoke_runs(tmp)[-1]
    assert validate(newest) == [], validate(newest)
    assert (dataset_dir(tmp) / "dataset.json").is_file()
    return newest


def with_data(tmp: Path, data: Path) -> Path:
    """A fresh results directory over the shared micro dataset."""
    (tmp / "data").symlink_to(data, target_is_directory=True)
    return tmp
