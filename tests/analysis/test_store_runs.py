"""Which runs set the object store beside local disk: the local-disk run measured nearest the store's.

No Spark: the test copies the local manifest_8mb reference run and the object store's reference
runs into a temporary results directory (the fixture of the page's tests) and adds local runs.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

from icelab.analysis.store_runs import planning_runs, started
from icelab.core.runs import load_run
from tests.tools.test_docs_planning import REFERENCE
from tests.tools.test_docs_store_page import _copy, results, store_runs

__all__ = ["results"]  # the fixture the test takes


def test_the_local_row_is_the_local_run_measured_nearest_the_stores(results: Path) -> None:
    """Of several local-disk runs of the store's dataset, the one started nearest the store's runs
    gives the local rows; a nearer run of another dataset is not one of them."""
    source = sorted((REFERENCE / "manifest_8mb").iterdir())[-1]
    store = load_run(store_runs(results)[0])
    at = started(store)

    def local_at(delta: timedelta, suffix: str) -> Path:
        name = f"{(at + delta):%Y%m%dT%H%M%SZ}-{suffix}"
        return _copy(source, results / "reference" / "manifest_8mb" / name)

    near, far = local_at(timedelta(hours=-2), "aaaaaa"), local_at(timedelta(days=3), "bbbbbb")
    other = local_at(timedelta(minutes=1), "cccccc")
    meta = json.loads((other / "run.json").read_text())
    (other / "run.json").write_text(json.dumps({**meta, "dataset": "medium-000000000000"}))
    assert planning_runs(results / "reference")[0].path == near
    shutil.rmtree(near)
    assert planning_runs(results / "reference")[0].path != far  # the copied newest run is nearer than 3 days
