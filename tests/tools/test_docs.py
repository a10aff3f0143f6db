"""`icelab docs`: every generated block of README.md and docs/ equals what its results give."""

from __future__ import annotations

import io
import re
import shutil
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

import icelab.tools.docs
from icelab.tools.docs import BLOCK, main, render

REPO = Path(__file__).resolve().parents[2]


def copy_checkout(root: Path) -> Path:
    """A copy of the README, docs/ and the reference results under `root`, to edit freely."""
    shutil.copy(REPO / "README.md", root)
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(REPO / "docs", root / "docs")
    (root / "results").mkdir()
    (root / "results" / "reference").symlink_to(REPO / "results" / "reference")
    return root


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the README, docs/ and the reference results, to edit freely."""
    return copy_checkout(tmp_path)


def test_the_committed_docs_are_what_the_results_give(capsys, monkeypatch) -> None:
    # As a clone with more objects abbreviates: git's short hashes grow with the object count.
    for key, value in {"COUNT": "1", "KEY_0": "core.abbrev", "VALUE_0": "12"}.items():
        monkeypatch.setenv(f"GIT_CONFIG_{key}", value)
    assert main(["--check"]) == 0, capsys.readouterr().out
    assert BLOCK.search((REPO / "README.md").read_text()), "the README has no generated block"


def test_a_site_past_a_limit_fails_both_the_check_and_the_rewrite(checkout: Path, capsys) -> None:
    page = checkout / "docs" / "commands.md"
    page.write_text(page.read_text() + "\n" + "A sentence of many words, " * 10 + "and on.\n")
    assert main(["--check", "--root", str(checkout)]) == 1
    assert main(["--root", str(checkout)]) == 1
    out = capsys.readouterr().out
    assert "docs: commands.md:" in out and "a sentence of 52 words, over the limit of 40" in out, out


def readme_edit(checkout: Path) -> tuple[Path, str, str]:
    """A duration in the README's first generated block changed to 99 min: (file, text, edited)."""
    readme = checkout / "README.md"
    text = readme.read_text()
    block = BLOCK.search(text)
    assert block is not None
    number = re.search(r"\d+(\.\d+)? min", block.group("body"))
    assert number is not None, "the experiment table shows no duration"
    edited = (
        text[: block.start("body") + number.start()] + "99 min" + text[block.start("body") + number.end() :]
    )
    return readme, text, edited


def later_block_edit(checkout: Path) -> tuple[Path, str, str]:
    """A digit of the last block that holds a figure, on the page with the most blocks, changed:
    (file, text, edited)."""
    page = max((checkout / "docs").glob("*.md"), key=lambda p: len(BLOCK.findall(p.read_text())))
    text = page.read_text()
    with_figure = [b for b in BLOCK.finditer(text) if re.search(r"\d", b.group("body"))]
    assert len(with_figure) >= 2, f"{page.name} has fewer than two blocks with a figure"
    block = with_figure[-1]
    digit = re.search(r"\d", block.group("body"))
    at = block.start("body") + digit.start()
    return page, text, text[:at] + str((int(text[at]) + 1) % 10) + text[at + 1 :]


@dataclass(frozen=True)
class Edited:
    """One checkout with both hand edits: `--check`'s exit and output, each edited file after
    it, then the rewrite's exit and each file after that, by edit."""

    edits: dict[str, tuple[Path, str, str]]
    checked: int
    out: str
    after_check: dict[str, str]
    rewritten: int
    after_rewrite: dict[str, str]


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Edited:
    """Both edits in one checkout, checked once and rewritten once, and each file's own line in
    the output says which edit was caught. The checkout's results are the committed ones, so its
    blocks are those the committed-docs test wrote in this process (`render` keeps a block while
    no file under results/reference changes), unless this test runs alone."""
    checkout = copy_checkout(tmp_path_factory.mktemp("edited"))
    edits = {"readme": readme_edit(checkout), "later": later_block_edit(checkout)}
    for path, _, new in edits.values():
        path.write_text(new)
    out = io.StringIO()
    with redirect_stdout(out):
        checked = main(["--check", "--root", str(checkout)])
    after_check = {name: path.read_text() for name, (path, _, _) in edits.items()}
    with redirect_stdout(io.StringIO()):
        rewritten = main(["--root", str(checkout)])
    after_rewrite = {name: path.read_text() for name, (path, _, _) in edits.items()}
    return Edited(edits, checked, out.getvalue(), after_check, rewritten, after_rewrite)


def test_a_number_edited_by_hand_is_caught(edited: Edited) -> None:
    _, text, new = edited.edits["readme"]
    assert edited.checked == 1
    assert "README.md: differs from its results" in edited.out
    # The check says what differed: the hand-typed figure, against the one its results give.
    assert re.search(r"^  -.*99 min", edited.out, re.M) and re.search(r"^  \+", edited.out, re.M)
    assert edited.after_check["readme"] == new  # --check writes nothing
    assert edited.rewritten == 0
    assert edited.after_rewrite["readme"] == text


def test_a_block_without_a_generator_is_one_line(checkout: Path, capsys) -> None:
    page = checkout / "docs" / "index.md"
    page.write_text(page.read_text() + "<!-- generated:nope -->\n<!-- /generated:nope -->\n")
    assert main(["--check", "--root", str(checkout)]) == 2
    assert "docs/index.md: no generator for block 'nope'" in capsys.readouterr().err


def test_a_page_outside_history_that_names_an_issue_fails_the_check(checkout: Path, capsys) -> None:
    page = checkout / "docs" / "planning.md"
    page.write_text(page.read_text() + "\nThe table was larger until issue 74.\n")
    assert main(["--check", "--root", str(checkout)]) == 1
    out = capsys.readouterr().out
    assert "outside History, how a figure was reached: docs/planning.md:" in out
    assert "site: " in out and " words (" in out


def test_a_block_whose_results_are_missing_is_one_line(checkout: Path, capsys) -> None:
    (checkout / "results" / "reference").unlink()
    (checkout / "results" / "reference").mkdir()  # no stored run at all
    assert main(["--check", "--root", str(checkout)]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(r"icelab: error: docs/[\w-]+\.md: no .+ under \S+/results/reference\n", err), err


def test_a_number_edited_in_a_later_block_of_a_page_is_caught(edited: Edited) -> None:
    """Every block of a page is rendered, not only its first: edit the last block that holds a
    figure on the page with the most blocks."""
    page, text, new = edited.edits["later"]
    assert edited.checked == 1
    assert f"docs/{page.name}: differs from its results" in edited.out
    assert edited.after_check["later"] == new  # --check writes nothing
    assert edited.rewritten == 0
    assert edited.after_rewrite["later"] == text


def test_a_block_is_written_again_when_a_file_under_reference_changes(tmp_path: Path, monkeypatch) -> None:
    """`render` keeps a written block while no file under results/reference changes: a second
    render asks its generator nothing, a rewritten file is read again, and so is a new one."""
    results = tmp_path / "results"
    (results / "reference" / "probe").mkdir(parents=True)
    source = results / "reference" / "probe" / "figure.txt"
    source.write_text("12")
    calls = []

    def probe(at: Path) -> str:
        calls.append(at)
        figures = sorted((at / "reference" / "probe").iterdir())
        return "".join(f"{p.name}: {p.read_text()}\n" for p in figures)

    monkeypatch.setattr(icelab.tools.docs, "blocks", lambda: {"probe": probe})
    page = "<!-- generated:probe -->\n<!-- /generated:probe -->\n"
    first = render(page, results, "page.md")
    assert "figure.txt: 12" in first
    assert render(page, results, "page.md") == first and len(calls) == 1
    source.write_text("13")
    assert "figure.txt: 13" in render(page, results, "page.md") and len(calls) == 2
    (source.parent / "other.txt").write_text("7")
    assert "other.txt: 7" in render(page, results, "page.md") and len(calls) == 3
