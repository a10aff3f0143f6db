"""manifest_health end to end on tiny: verdict before, rewrite on a copy, verdict after."""

from __future__ import annotations

import json

import pandas as pd

from icelab.core.config import Threshold
from icelab.experiments import manifest_health
from icelab.experiments.manifest_health import judge


def test_judge_takes_the_worst_level_and_says_why():
    stats = {"bounds": {"p90": 6.0, "max": 40.0}, "span": {"median": 0.05}}
    rules = {
        "bounds_p90": Threshold(advise=4, need=16),
        "bounds_max": Threshold(advise=8, need=32),
        "span_median": Threshold(advise=0.1, need=0.5),
    }
    verdict, reasons = judge(stats, rules)
    assert verdict == "rewrite needed"
    assert reasons == ["bounds_p90 = 6.00 > 4 (rewrite advised)", "bounds_max = 40.00 > 32 (rewrite needed)"]
    assert judge({"bounds": {"p90": 1.0}}, {"bounds_p90": Threshold(advise=4, need=16)}) == ("healthy", [])


def test_report_before_and_after_rewrite(compose_run, tiny, capsys):
    cfg = compose_run("experiment=manifest_health", "experiment.rewrite_target=16KB", "charts=true")
    run_dir = manifest_health.run(cfg)
    report = json.loads((run_dir / "report.json").read_text())
    assert [r["state"] for r in report] == ["as_ingested", "rewrite_16kb"]
    assert report[0]["verdict"] == "rewrite needed" and report[1]["verdict"] == "healthy"
    assert report[1]["stats"]["bounds"]["max"] <= 2
    parts = pd.read_parquet(run_dir / "partitions.parquet")
    assert set(parts.state) == {"as_ingested", "rewrite_16kb"} and len(parts) == 2 * 60
    for name in (
        "manifests.parquet",
        "env.json",
        "config.yaml",
        "manifests_per_partition.png",
        "manifest_sizes.png",
    ):
        assert (run_dir / name).is_file(), name
    assert "REWRITE NEEDED" in capsys.readouterr().out
