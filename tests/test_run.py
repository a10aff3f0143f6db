"""`python run.py -m ...`: a multirun runs each job with its own Spark session and results."""

from __future__ import annotations

import json

from icelab.core.contract import validate
from tests.conftest import SMOKE_PY, run_py


def test_multirun_sweeps_profiles(tiny, data_dir, tmp_path):
    results = tmp_path / "results"
    proc = run_py(
        "-m",
        *SMOKE_PY,
        "profile=as_ingested,rewrite_16kb",
        f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}",
        f"hydra.sweep.dir={tmp_path / 'multirun'}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = sorted((results / "runs" / "smoke").iterdir())
    assert len(runs) == 2
    profiles = [list(json.loads((r / "run.json").read_text())["profiles"]) for r in runs]
    assert profiles == [["as_ingested"], ["rewrite_16kb"]]
    assert all(validate(r) == [] for r in runs)
    hashes = {json.loads((r / "env.json").read_text())["dataset"]["hash"] for r in runs}
    assert hashes == {tiny.dataset.hash}
