"""docs/metadata-scale.md's planning block: a state whose cells have different rounds prints
each cell's n (the one-sitting block: `tests/analysis/test_model_checks.py`); its target block
judges the 1-day plan at the target against one second, from the measured plans only.

No Spark: a copy of the stored run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from icelab.tools.docs import metadata
from tests.tools.test_docs_planning import REFERENCE


def test_a_state_whose_cells_have_different_n_prints_each_cells_n(tmp_path: Path) -> None:
    main = sorted((REFERENCE / metadata.EXPERIMENT).iterdir())[-1]
    shutil.copytree(main, tmp_path / "reference" / metadata.EXPERIMENT / main.name)
    text = metadata.planning_tables(tmp_path)
    assert "so no spread or interval is shown" in text
    assert "| 1d | 30d | 180d |" in text  # PLAN_WINDOWS only
    ten = text.split("| `meta_10m")[1].split("| `meta_1m")[0]
    assert "(n = 1 to 3, each cell's in brackets) | `iceberg/as_ingested/local` | 76.52 (1) |" in ten
    assert "/distributed" not in text and "/local_cache" not in text  # Iceberg's default mode only
    one = text.split("| `meta_1m")[1].split("| `meta_200k")[0]
    assert "(n = 2)" in one and " (2) |" not in one  # one n for the whole state: said once


def _target_set(tmp_path: Path, scale: float) -> Path:
    """A results directory with the main reference run, and in the target set a copy of its 10M
    state's rows with planning times `scale`d, plus a warm-up slower than any measured plan."""
    main = sorted((REFERENCE / metadata.EXPERIMENT).iterdir())[-1]
    shutil.copytree(main, tmp_path / "reference" / metadata.EXPERIMENT / main.name)
    target = tmp_path / "reference" / metadata.TARGET_SET / metadata.EXPERIMENT / main.name
    shutil.copytree(main, target)
    m = pd.read_parquet(target / "measurements.parquet")
    m = m[m["dataset"].str.startswith("meta_10m")].assign(planning_ms=lambda d: d["planning_ms"] * scale)
    warm = m[(m["variant"] == "iceberg/rewrite_64mb/local") & (m["window"] == "1d")].head(1)
    warm = warm.assign(warmup=True, repetition=-1, planning_ms=1e6)
    pd.concat([m, warm], ignore_index=True).to_parquet(target / "measurements.parquet", index=False)
    return tmp_path


def test_the_day_plan_at_the_target_is_judged_against_one_second_beside_the_layouts_before_it(
    tmp_path: Path,
) -> None:
    text = metadata.target_block(_target_set(tmp_path, 0.25))
    # The target set's row (a quarter of the main run's times); the main run's plan in the sentence.
    rows = [line for line in text.splitlines() if "| rewrite_64mb | local |" in line]
    assert len(rows) == 1
    assert "| 0.44 | 3 | 0.43 to 0.45 | yes |" in rows[0]
    assert "At the same size in run " in text and "rewrite_64mb (local) 1.76 s (n = 3," in text
    # Only the 10M state's rewritten layouts, not the smaller states' or the as-ingested one.
    assert "meta_1m" not in text and "as_ingested" not in text
    assert "planning took 0.44 s at the median of 3 plans (0.43 to 0.45 s): within 1 s." in text


def test_a_day_plan_over_one_second_is_said_to_be_over_it(tmp_path: Path) -> None:
    text = metadata.target_block(_target_set(tmp_path, 1.0))
    assert "planning took 1.76 s at the median of 3 plans (1.74 to 1.79 s): above 1 s." in text
    assert "within 1 s" not in text and "| yes |" not in text


def test_every_run_of_the_target_set_is_shown_with_the_cpu_it_ran_on(tmp_path: Path) -> None:
    """Two runs of the target set: both are rows, the newer first, each with its run's CPU (plans
    of two machines do not compare), and the sentence judges the newer one."""
    results = _target_set(tmp_path, 0.25)
    base = results / "reference" / metadata.TARGET_SET / metadata.EXPERIMENT
    (older,) = base.iterdir()
    newer = base / "29991231T000000Z-newer"
    shutil.copytree(older, newer)
    env = json.loads((newer / "env.json").read_text())
    env["machine"]["cpu"] = "Test CPU 9000"
    (newer / "env.json").write_text(json.dumps(env))
    m = pd.read_parquet(newer / "measurements.parquet")
    m.assign(planning_ms=m["planning_ms"] * 8).to_parquet(newer / "measurements.parquet", index=False)
    text = metadata.target_block(results)
    rows = [line for line in text.splitlines() if "| rewrite_64mb | local |" in line]
    assert len(rows) == 2
    assert rows[0].startswith(f"| `{newer.name}` | Test CPU 9000 |") and "| 3.52 | 3 |" in rows[0]
    assert rows[1].startswith(f"| `{older.name}` | AMD EPYC |") and "| 0.44 | 3 |" in rows[1]
    assert "planning took 3.52 s at the median of 3 plans" in text and "took 0.44 s" not in text
