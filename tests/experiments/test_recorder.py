"""Nothing lost when a run stops early: rows on disk as they come, status in run.json."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from experiments.recorder import PARTIAL, Recorder
from icelab.contract import MEASUREMENTS, validate


def test_interrupted_run_keeps_its_rows(tmp_path):
    rec = Recorder(tmp_path, {"run_id": "r", "planned_rows": 3, "protocol": {}})
    rec.add(
        {
            "query_id": "q",
            "variant": "parquet",
            "window": "1d",
            "repetition": 0,
            "status": "ok",
            "planning_ms": 1.0,
        }
    )
    assert len((tmp_path / PARTIAL).read_text().splitlines()) == 1  # on disk before any flush
    rec.add(
        {
            "query_id": "q",
            "variant": "parquet",
            "window": "7d",
            "repetition": 0,
            "status": "ok",
            "planning_ms": 2.0,
        }
    )
    rec.close("interrupted")
    assert pq.read_table(tmp_path / MEASUREMENTS).num_rows == 2
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "interrupted" and run["rows"] == 2
    assert (tmp_path / PARTIAL).exists()
    (tmp_path / "env.json").write_text("{}")
    (tmp_path / "config.yaml").write_text("")
    problems = " ".join(validate(tmp_path))
    assert "run status is 'interrupted'" in problems and "2 rows, but 3 were planned" in problems
