"""The docs' prose measured: its sentences and their length in words.

The sentences are those of the prose a person writes: fenced code, table rows and the
`<!-- generated:NAME -->` blocks are skipped, headings too. A paragraph is joined into one
line, then split on `. `, `? ` and `! `. `icelab docs` prints the longest (`site_rules.counts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from icelab.tools.docs import BLOCK

# A sentence ends at `.`, `?` or `!`, after which may come closing marks (`**`, `)`, a quote).
_END = re.compile(r"[.?!][*)\"'`]*\s+")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a page, with its length in words and the line its paragraph starts on."""

    page: str
    line: int
    words: int
    text: str


def paragraphs(text: str) -> list[tuple[int, str]]:
    """The prose paragraphs of a markdown page, each with its first line number (from 1)."""
    found: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    fenced = False
    # Generated blocks are not prose: blanked, their lines kept so that line numbers hold.
    text = BLOCK.sub(lambda block: "\n" * block.group(0).count("\n"), text)

    def close() -> None:
        if current:
            found.append((start, " ".join(current)))
            current.clear()

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            close()
            fenced = not fenced
            continue
        if fenced or raw.startswith("    ") and not current:
            continue
        if not line or line.startswith(("|", "#", "<!--")):
            close()
            continue
        if line.startswith(("- ", "* ")) or re.match(r"\d+\. ", line):
            close()
            line = re.sub(r"^(?:[-*]|\d+\.)\s+", "", line)
        if not current:
            start = number
        current.append(line)
    close()
    return found


def sentences(page: Path) -> list[Sentence]:
    """Every prose sentence of `page`."""
    out: list[Sentence] = []
    for line, paragraph in paragraphs(page.read_text()):
        cut = 0
        for end in [*_END.finditer(paragraph), None]:
            text = paragraph[cut : end.end() if end else len(paragraph)].strip()
            cut = end.end() if end else cut
            words = len(text.split())
            if words:
                out.append(Sentence(page.name, line, words, text))
    return out
