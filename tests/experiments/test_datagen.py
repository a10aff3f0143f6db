"""The `datagen` and `verify` experiments, run in-process on the composed tiny config."""

from __future__ import annotations

import json
from pathlib import Path

from icelab.experiments import datagen, verify


def latest_run(results_dir: Path, experiment: str) -> Path:
    return sorted((results_dir / "runs" / experiment).iterdir())[-1]


def test_datagen_prints_summary_and_stores_provenance(tiny, tiny_cfg, results_dir, capsys):
    datagen.run(tiny_cfg)
    out = capsys.readouterr().out
    assert f"dataset tiny-{tiny.dataset.hash}: reused" in out
    for needle in ("rows ", "parquet ", "iceberg ", "manifests ", "throughput ", "rows/s", "MB/s"):
        assert needle in out
    assert "verified     iceberg = parquet: 12,000 rows" in out
    assert "read by      spark/iceberg before 2026-05-31; spark/parquet from 2026-05-31;" in out

    run = latest_run(results_dir, "datagen")
    env = json.loads((run / "env.json").read_text())
    assert env["dataset"]["hash"] == tiny.dataset.hash
    assert env["versions"]["spark"].startswith("3.5")
    assert env["versions"]["iceberg_jar"] == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
    assert env["versions"]["iceberg"].startswith("1.10")
    assert {"commit", "dirty"} <= set(env["git"])
    assert env["machine"]["cores"] >= 1
    assert env["spark_conf"]["spark.sql.iceberg.aggregate-push-down.enabled"] == "false"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["dataset"]["summary"]["rows"] == tiny.dataset.config.total_rows
    assert "dataset:" in (run / "config.yaml").read_text()


def test_verify_experiment(tiny, compose_run, results_dir, capsys):
    verify.run(compose_run("experiment=verify"))
    out = capsys.readouterr().out
    assert "identical: 4 readings agree on all 60 day partitions, each read by 4" in out
    result = json.loads((latest_run(results_dir, "verify") / "verification.json").read_text())
    assert result["ok"] and not result["mismatches"]


def test_the_bound_line_sets_the_builds_wall_time_against_the_bound():
    floors = {"write_file_ms": 2.5, "read_file_ms": 3.0, "write_mb_per_s": 20.0, "read_mb_per_s": 100.0}
    b = {"floors": floors, "cores": 2, "parts_s": {"generate_s": 10.0, "write_s": 30.0}, "bound_s": 20.0}
    line = datagen.bound_line(b, 70.0)
    assert line.startswith("  bound        20.0 s = (generate 10.0 + write 30.0) / 2 cores")
    assert line.endswith("; this build 3.5x that")
    assert "this build" not in datagen.bound_line(b, None)
    assert "pages" not in line  # a bound stored before the codec's cost per page was measured
    floors |= {"pages_per_file": 157, "compress_call_us": 13.08, "decompress_call_us": 12.2}
    line = datagen.bound_line(b, 70.0)
    assert "a file 2.50 ms to write, 3.00 ms to read (157 pages, each 13.1 us compressed and 12.2 us" in line
