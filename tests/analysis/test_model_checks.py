"""The one-sitting set the cost model is checked on: the medium runs are predicted by the fit on
the sitting's own states run, never the main reference set's, and runs hours apart or planned with
AQE set differently are refused; the page's block shows that check.

No Spark: copies of the stored runs, edited.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icelab.analysis import model_checks
from icelab.tools.docs import metadata
from tests.tools.test_docs_planning import REFERENCE

SITTING = REFERENCE / model_checks.SITTING


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """The one-sitting set and the main set's metadata_scale run, copied."""
    shutil.copytree(SITTING, tmp_path / "reference" / model_checks.SITTING)
    main = sorted((REFERENCE / model_checks.EXPERIMENT).iterdir())[-1]
    shutil.copytree(main, tmp_path / "reference" / model_checks.EXPERIMENT / main.name)
    return tmp_path


def _run(base: Path, experiment: str) -> Path:
    return sorted((base / experiment).iterdir())[-1]


def _slow_down(run: Path, factor: float) -> None:
    path = run / "measurements.parquet"
    m = pd.read_parquet(path)
    m["planning_ms"] = m["planning_ms"] * factor
    m.to_parquet(path, index=False)


def test_the_medium_runs_are_predicted_by_the_sittings_own_fit(results: Path) -> None:
    fit, refs, before = model_checks.sitting_check(results)
    assert fit.experiment == model_checks.EXPERIMENT
    assert sorted(r.experiment for r in refs) == ["manifest_8mb", "manifest_sweep"]
    assert not before.reference.empty
    # The main set's states run three times slower: the sitting's check does not move.
    _slow_down(_run(results / "reference", model_checks.EXPERIMENT), 3.0)
    _, _, same = model_checks.sitting_check(results)
    np.testing.assert_allclose(same.reference["predicted_ms"], before.reference["predicted_ms"])
    # The sitting's states run twice as slow: a fit weighted 1/y^2 doubles every prediction.
    _slow_down(_run(results / "reference" / model_checks.SITTING, model_checks.EXPERIMENT), 2.0)
    _, _, doubled = model_checks.sitting_check(results)
    np.testing.assert_allclose(
        doubled.reference["predicted_ms"], 2 * before.reference["predicted_ms"], rtol=1e-6
    )
    block = metadata.sitting_block(results)
    for run in [fit, *refs]:
        assert run.run_id in block
    under = int((doubled.reference["rel_error"] < 0).sum())
    within = int((doubled.reference["rel_error"].abs() <= model_checks.BAR).sum())
    assert f"{within} of {len(doubled.reference)} cells within 25% of it, {under} predicted below" in block


def test_runs_hours_apart_are_not_one_sitting(results: Path) -> None:
    model_checks.sitting_runs(results)  # as stored: one sitting
    run_json = _run(results / "reference" / model_checks.SITTING, "manifest_sweep") / "run.json"
    meta = json.loads(run_json.read_text())
    late = datetime.fromisoformat(meta["started_utc"]) + timedelta(hours=3)
    meta["started_utc"] = late.isoformat()
    run_json.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not one sitting"):
        model_checks.sitting_runs(results)


def test_runs_planned_with_aqe_set_differently_are_not_compared(results: Path) -> None:
    """AQE off prepares the whole physical plan at planning time: a states run without it would
    carry that into the fit's fixed cost and every medium prediction."""
    model_checks.sitting_runs(results)  # as stored: every run with Spark's default, AQE on
    env_json = _run(results / "reference" / model_checks.SITTING, model_checks.EXPERIMENT) / "env.json"
    env = json.loads(env_json.read_text())
    env["spark_conf"]["spark.sql.adaptive.enabled"] = "false"
    env_json.write_text(json.dumps(env))
    with pytest.raises(ValueError, match="not planned alike: .* AQE off"):
        model_checks.sitting_runs(results)
