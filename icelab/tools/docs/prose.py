"""The docs' prose measured: lines per page and the longest sentence in words.

The sentences are those of the prose a person writes: fenced code, table rows and the
`<!-- generated:NAME -->` blocks are skipped, headings too. A paragraph is joined into one
line, then split on `. `, `? ` and `! `. Run it as
`python -m icelab.tools.docs.prose docs/*.md`; it prints the total lines and the longest sentences.
"""

from __future__ import annotations

import re
import sys
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


def main(argv: list[str]) -> int:
    """Print the pages' total lines and their five longest sentences."""
    pages = [Path(arg) for arg in argv]
    lines = sum(len(page.read_text().splitlines()) for page in pages)
    every = sorted((s for page in pages for s in sentences(page)), key=lambda s: -s.words)
    print(f"{len(pages)} pages, {lines} lines")
    for sentence in every[:5]:
        print(f"{sentence.words:4d} words  {sentence.page}:{sentence.line}  {sentence.text[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
