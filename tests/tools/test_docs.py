"""`icelab docs`: every generated block of README.md and docs/ equals what its results give."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from icelab.tools.docs import BLOCK, main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the README, docs/ and the reference results, to edit freely."""
    shutil.copy(REPO / "README.md", tmp_path)
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "reference").symlink_to(REPO / "results" / "reference")
    return tmp_path


def test_the_committed_docs_are_what_the_results_give(capsys) -> None:
    assert main(["--check"]) == 0, capsys.readouterr().out
    assert BLOCK.search((REPO / "README.md").read_text()), "the README has no generated block"


def test_a_number_edited_by_hand_is_caught(checkout: Path, capsys) -> None:
    readme = checkout / "README.md"
    text = readme.read_text()
    block = BLOCK.search(text)
    assert block is not None
    number = re.search(r"\d+(\.\d+)? min", block.group("body"))
    assert number is not None, "the experiment table shows no duration"
    edited = (
        text[: block.start("body") + number.start()] + "99 min" + text[block.start("body") + number.end() :]
    )
    readme.write_text(edited)
    assert main(["--check", "--root", str(checkout)]) == 1
    assert "README.md: differs from its results" in capsys.readouterr().out
    assert readme.read_text() == edited  # --check writes nothing
    assert main(["--root", str(checkout)]) == 0
    assert readme.read_text() == text


def test_a_block_without_a_generator_is_one_line(checkout: Path, capsys) -> None:
    page = checkout / "docs" / "index.md"
    page.write_text(page.read_text() + "<!-- generated:nope -->\n<!-- /generated:nope -->\n")
    assert main(["--check", "--root", str(checkout)]) == 2
    assert "docs/index.md: no generator for block 'nope'" in capsys.readouterr().err


def test_a_block_whose_results_are_missing_is_one_line(checkout: Path, capsys) -> None:
    (checkout / "results" / "reference").unlink()
    (checkout / "results" / "reference").mkdir()  # no stored run at all
    assert main(["--check", "--root", str(checkout)]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"icelab: error: docs/\w+\.md: no .+ under \S+/results/reference\n", err), err


def test_a_number_edited_in_a_later_block_of_a_page_is_caught(checkout: Path, capsys) -> None:
    """Every block of a page is rendered, not only its first: edit the last block that holds a
    figure on the page with the most blocks."""
    page = max((checkout / "docs").glob("*.md"), key=lambda p: len(BLOCK.findall(p.read_text())))
    text = page.read_text()
    with_figure = [b for b in BLOCK.finditer(text) if re.search(r"\d", b.group("body"))]
    assert len(with_figure) >= 2, f"{page.name} has fewer than two blocks with a figure"
    block = with_figure[-1]
    digit = re.search(r"\d", block.group("body"))
    at = block.start("body") + digit.start()
    edited = text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]
    page.write_text(edited)
    assert main(["--check", "--root", str(checkout)]) == 1
    assert f"docs/{page.name}: differs from its results" in capsys.readouterr().out
    assert main(["--root", str(checkout)]) == 0
    assert page.read_text() == text
