"""icelab.tools.docs.prose: the sentences it measures are the prose a person writes, not code,
tables or generated blocks."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.docs.prose import sentences

PAGE = """# A heading of many many many many words

One short sentence. A second one,
split over two lines? Yes!

```bash
python run.py one two three four five six. seven eight
```

| a | table. row |
| --- | --- |

<!-- generated:x -->
A generated sentence that is long. Another.
<!-- /generated:x -->

- an item. And its second sentence
"""


def test_only_prose_is_measured(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    found = [(s.words, s.text) for s in sentences(page)]
    assert found == [
        (3, "One short sentence."),
        (7, "A second one, split over two lines?"),
        (1, "Yes!"),
        (2, "an item."),
        (4, "And its second sentence"),
    ]


# The docs' style: no sentence of prose over 40 words. The blind checks' pages are registration
# records, kept as registered; generated blocks, code and tables are not prose.
REPO = Path(__file__).resolve().parents[2]
LIMIT = 40
RECORDS = ("costmodel-check*.md", "decision-check.md")


def prose_pages(docs: Path) -> list[Path]:
    """The pages whose prose is held to the limit: every docs page but the registration records."""
    records = {page for pattern in RECORDS for page in docs.glob(pattern)}
    return sorted(page for page in docs.glob("*.md") if page not in records)


def too_long(pages: list[Path], limit: int = LIMIT) -> list[str]:
    """Each sentence over `limit` words, as `page:line: N words: text`."""
    return [
        f"{s.page}:{s.line}: {s.words} words: {s.text}"
        for page in pages
        for s in sentences(page)
        if s.words > limit
    ]


def test_no_sentence_in_the_docs_is_over_40_words() -> None:
    pages = prose_pages(REPO / "docs")
    assert len(pages) > 20
    assert too_long(pages) == []


def test_a_planted_sentence_of_41_words_fails_and_40_passes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    planted = " ".join(["word"] * 40)
    (docs / "page.md").write_text(f"# A page\n\nShort one. {planted}.\n")
    (docs / "costmodel-check-9.md").write_text(f"# A record\n\n{planted} more words.\n")
    assert too_long(prose_pages(docs)) == []
    (docs / "page.md").write_text(f"# A page\n\nShort one. {planted} more.\n")
    assert too_long(prose_pages(docs)) == [f"page.md:3: 41 words: {planted} more."]
