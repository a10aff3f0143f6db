"""docs/metadata-scale.md's planning block: a state whose cells have different rounds prints
each cell's n (the one-sitting block: `tests/analysis/test_model_checks.py`).

No Spark: a copy of the stored run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from icelab.tools.docs import metadata
from tests.tools.test_docs_planning import REFERENCE


def test_a_state_whose_cells_have_different_n_prints_each_cells_n(tmp_path: Path) -> None:
    main = sorted((REFERENCE / metadata.EXPERIMENT).iterdir())[-1]
    shutil.copytree(main, tmp_path / "reference" / metadata.EXPERIMENT / main.name)
    text = metadata.planning_tables(tmp_path)
    assert "too few for a spread or an interval" in text
    ten = text.split("**`meta_10m")[1].split("**`")[0]
    assert "(n = 1 to 3, each cell's in brackets)" in ten
    assert "| `iceberg/as_ingested/local` | 84.45 (1) |" in ten
    one = text.split("**`meta_1m")[1].split("**`")[0]
    assert "(n = 2)" in one and " (2) |" not in one  # one n for the whole state: said once
