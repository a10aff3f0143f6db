"""Imports run down the layers only, and no modules of a package import each other in a circle (the
contracts are in pyproject.toml, [tool.importlinter])."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` over the `icelab` package found first under `root`, with root's pyproject."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_import_runs_down_the_layers() -> None:
    result = lint(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("core/results.py", "from icelab.analysis import stats", "layers import only downward BROKEN"),
        ("analysis/stats.py", "from icelab.charts import style", "layers import only downward BROKEN"),
        ("charts/style.py", "import pyspark", "charts read stored results only: no Spark BROKEN"),
        ("health/policy.py", "from icelab.charts import style", "layers import only downward BROKEN"),
        ("analysis/stats.py", "import pyspark", "analysis reads stored results only: no Spark BROKEN"),
        # costmodel imports costmodel_output: an import back, even inside a function, closes a circle.
        (
            "tools/costmodel_output.py",
            "def _verb():\n    from icelab.tools import costmodel",
            "no import circle among the modules of a package BROKEN",
        ),
    ],
)
def test_a_planted_upward_import_is_caught(tmp_path: Path, module: str, planted: str, contract: str) -> None:
    shutil.copytree(REPO / "icelab", tmp_path / "icelab", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    target = tmp_path / "icelab" / module
    target.write_text(target.read_text() + f"\n{planted}  # planted\n")
    result = lint(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert contract in result.stdout
