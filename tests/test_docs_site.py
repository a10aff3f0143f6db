"""The docs site builds in strict mode: the real docs build clean, and a page left out of the
navigation, a broken link or a broken anchor each fail the build (mkdocs.yml `validation:`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOOKS = Path("icelab/tools/docs/site_hooks.py")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """mkdocs.yml, docs/ and the site's hook in a scratch directory; results/ linked, not copied."""
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    (tmp_path / HOOKS).parent.mkdir(parents=True)
    shutil.copy(REPO / HOOKS, tmp_path / HOOKS)
    (tmp_path / "results").symlink_to(REPO / "results")
    return tmp_path


def build(root: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of `root`, as `make docs-site` runs it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml")]
    return subprocess.run(
        [*command, "-d", str(root / "site")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_real_docs_build_clean_in_strict_mode(checkout: Path) -> None:
    done = build(checkout)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    # The charts the pages link under ../results/ are in the site, where the pages point.
    assert (checkout / "site/results/reference/charts/manifest_8mb/planning_vs_window.png").is_file()


def test_a_page_not_in_the_nav_fails_the_build(checkout: Path) -> None:
    (checkout / "docs" / "orphan.md").write_text("# An orphan\n\nNo nav entry names this page.\n")
    done = build(checkout)
    assert done.returncode != 0
    assert "orphan.md" in done.stderr and 'not included in the "nav"' in done.stderr


@pytest.mark.parametrize(
    ("link", "named"),
    [("no-such-page.md", "no-such-page.md"), ("results.md#no-such-section", "no-such-section")],
    ids=["page", "anchor"],
)
def test_a_broken_link_fails_the_build(checkout: Path, link: str, named: str) -> None:
    page = checkout / "docs" / "commands.md"
    page.write_text(page.read_text() + f"\nSee [there]({link}).\n")
    done = build(checkout)
    assert done.returncode != 0
    assert named in done.stderr
