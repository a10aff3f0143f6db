"""The registration records (site_rules.RECORDS) keep their registered words: since the commit
that added each page, a word outside the generated blocks was only ever added after them, never
removed, changed or moved. Sentences may be split (punctuation and case), not reworded (no Spark)."""

from __future__ import annotations

import difflib
import re
import subprocess
from pathlib import Path

import pytest

from icelab.tools.docs import BLOCK, site_rules

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted(
    {
        p.name
        for pattern in (*site_rules.RECORDS, "decision-check-*.md")
        for p in (REPO / "docs").glob(pattern)
    }
)
# Edits made to a registered text before this test held it, each (registered words, words now):
# check 1's page references were renamed when its model's section moved to costmodel.md.
RENAMED = {
    "costmodel-check.md": [
        ("metadata scale", "costmodel"),
        ("planning cost", ""),
        ("metadata scale", "costmodel"),
    ]
}


def words(text: str) -> list[str]:
    """The words of a page outside its generated blocks, lowercased, link targets left out."""
    text = re.sub(r"\]\([^)]*\)", "]", BLOCK.sub(" ", text))
    return re.findall(r"[a-z0-9]+", text.lower())


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def edits(registered: list[str], now: list[str]) -> list[tuple[str, str]]:
    """Every change from the registered words to the words now but an insertion."""
    matcher = difflib.SequenceMatcher(a=registered, b=now, autojunk=False)
    return [
        (" ".join(registered[i1:i2]), " ".join(now[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "delete")
    ]


@pytest.mark.parametrize("page", PAGES)
def test_a_records_registered_words_are_all_still_there_in_order(page: str) -> None:
    commit = git("log", "--diff-filter=A", "--format=%H", "--", f"docs/{page}").split()[-1]
    registered = words(git("show", f"{commit}:docs/{page}"))
    assert len(registered) > 300
    assert edits(registered, words((REPO / "docs" / page).read_text())) == RENAMED.get(page, [])


def test_a_reworded_record_is_caught() -> None:
    registered = words("The model is fixed, and its criterion: within 25% at 90% of cells.")
    assert (
        edits(registered, words("The model is fixed. And its criterion: within 25% at 90% of cells.")) == []
    )
    assert edits(registered, words("The model is fixed. Its criterion: within 30% at 90% of cells.")) == [
        ("and", ""),
        ("25", "30"),
    ]
