"""`python run.py -m ...`: a multirun runs each job with its own Spark session and results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from icelab.contract import validate

REPO = Path(__file__).resolve().parents[1]


def test_multirun_sweeps_profiles(tiny, data_dir, tmp_path):
    results = tmp_path / "results"
    args = [
        "-m",
        "experiment=smoke",
        "profile=as_ingested,rewrite_16kb",
        "experiment.queries=[count_window]",
        "experiment.windows=[1h,1d]",
        "experiment.ratio=[1d,1h]",
        "protocol.warmups=0",
        "protocol.repetitions=1",
        "protocol.overhead_pairs=0",
        "engine.master='local[2]'",
        "engine.driver_memory=2g",
        "progress=false",
        f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}",
        f"hydra.sweep.dir={tmp_path / 'multirun'}",
    ]
    proc = subprocess.run(
        [sys.executable, str(REPO / "run.py"), *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = sorted((results / "runs" / "smoke").iterdir())
    assert len(runs) == 2
    profiles = [list(json.loads((r / "run.json").read_text())["profiles"]) for r in runs]
    assert profiles == [["as_ingested"], ["rewrite_16kb"]]
    assert all(validate(r) == [] for r in runs)
    hashes = {json.loads((r / "env.json").read_text())["dataset"]["hash"] for r in runs}
    assert hashes == {tiny.dataset.hash}
