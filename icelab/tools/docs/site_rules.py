"""The site's house rules that a strict build cannot see: how a figure was reached lives in
History, and the site's size in words stays inside its limits.

History is the nav's `History` section of mkdocs.yml, with every page under it. Elsewhere no page
names an issue, a stop or a "last change": those say how a figure or choice was reached. The
counts are whole-page words (`wc -w`), generated blocks included, and the longest sentence of
prose (`prose.sentences`).
The limits: the site, one page outside History, one sentence (`breaches`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from icelab.tools.docs import BLOCK, documents
from icelab.tools.docs.prose import sentences

HISTORY = "History"
# How a figure was reached: an issue or a stop by number, or a page's "last change".
HISTORY_WORDS = re.compile(r"\bissue #?[0-9]|\bstop [0-9]|\blast change\b", re.I)
# A newcomer reads the site in an hour: these many words in all, on one page outside History, in
# one sentence of prose.
SITE_WORDS, PAGE_WORDS, SENTENCE_WORDS = 45_000, 4_000, 40
# The registration records: they keep their registered words (tests/tools/test_docs_records.py);
# a long sentence of theirs is split, never reworded.
RECORDS = ("costmodel-check*.md", "decision-check*.md")


def _pages(entry: Any) -> Iterator[str]:
    """Every page file under one nav entry (a file, a titled file, or a section)."""
    if isinstance(entry, str):
        yield entry
    elif isinstance(entry, list):
        for item in entry:
            yield from _pages(item)
    elif isinstance(entry, dict):
        for value in entry.values():
            yield from _pages(value)


def history_pages(root: Path) -> set[str]:
    """The page files (relative to docs/) under the nav's History section of `root`/mkdocs.yml."""
    nav = yaml.safe_load((root / "mkdocs.yml").read_text()).get("nav") or []
    return {page for entry in nav if isinstance(entry, dict) and HISTORY in entry for page in _pages(entry)}


def outside_history(root: Path) -> list[Path]:
    """README.md and every docs page that is not under History."""
    history = history_pages(root)
    return [root / "README.md", *sorted(p for p in (root / "docs").glob("*.md") if p.name not in history)]


def history_words(root: Path) -> list[str]:
    """Each line outside History that says how a figure was reached, as `page:line: text`."""
    return [
        f"{page.relative_to(root)}:{number}: {line.strip()}"
        for page in outside_history(root)
        for number, line in enumerate(page.read_text().splitlines(), start=1)
        if HISTORY_WORDS.search(line)
    ]


@dataclass(frozen=True)
class Counts:
    """The site's size: words in all, in generated blocks, the longest page outside History and
    the longest sentence of prose."""

    words: int
    generated: int
    longest_page: tuple[str, int]
    longest_sentence: tuple[str, int]

    def line(self) -> str:
        page, words = self.longest_page
        where, length = self.longest_sentence
        return (
            f"site: {self.words:,} words ({self.generated:,} in generated blocks); "
            f"longest page outside History {page} ({words:,} words); "
            f"longest sentence {where} ({length} words)"
        )


def counts(root: Path) -> Counts:
    """The words of README.md and docs/, the generated ones apart, and the longest page and sentence."""
    texts = {page: page.read_text() for page in documents(root)}
    words = {page: len(text.split()) for page, text in texts.items()}
    generated = sum(len(m.group("body").split()) for text in texts.values() for m in BLOCK.finditer(text))
    longest = max(outside_history(root), key=lambda page: words[page])
    sentence = max((s for page in documents(root) for s in sentences(page)), key=lambda s: s.words)
    return Counts(
        sum(words.values()),
        generated,
        (str(longest.relative_to(root)), words[longest]),
        (f"{Path(sentence.page).name}:{sentence.line}", sentence.words),
    )


def breaches(root: Path) -> list[str]:
    """Each limit the site passes, as one line: the site's words, a page's outside History, a
    sentence's (`SITE_WORDS`, `PAGE_WORDS`, `SENTENCE_WORDS`)."""
    found = counts(root)
    out = (
        [f"site: {found.words:,} words, over the limit of {SITE_WORDS:,}"] if found.words > SITE_WORDS else []
    )
    for page in outside_history(root):
        words = len(page.read_text().split())
        if words > PAGE_WORDS:
            out.append(f"{page.relative_to(root)}: {words:,} words, over the page limit of {PAGE_WORDS:,}")
    out += [
        f"{s.page}:{s.line}: a sentence of {s.words} words, over the limit of {SENTENCE_WORDS}"
        for page in documents(root)
        for s in sentences(page)
        if s.words > SENTENCE_WORDS
    ]
    return out
