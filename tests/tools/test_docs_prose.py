"""icelab.tools.docs.prose: the sentences it measures are the prose a person writes, not code,
tables or generated blocks."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.docs import documents, site_rules
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


# The docs' style: no sentence of prose over 40 words (`site_rules.SENTENCE_WORDS`), the
# registration records' too; generated blocks, code and tables are not prose.
REPO = Path(__file__).resolve().parents[2]


def too_long(root: Path) -> list[str]:
    """Each sentence over the limit, as `page:line: N words: text`."""
    return [
        f"{s.page}:{s.line}: {s.words} words: {s.text}"
        for page in documents(root)
        for s in sentences(page)
        if s.words > site_rules.SENTENCE_WORDS
    ]


def test_no_sentence_in_the_docs_is_over_40_words() -> None:
    assert len(documents(REPO)) > 20
    assert too_long(REPO) == []


def test_a_planted_sentence_of_41_words_fails_and_40_passes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "README.md").write_text("# icelab\n\nA front door.\n")
    planted = " ".join(["word"] * 40)
    (docs / "page.md").write_text(f"# A page\n\nShort one. {planted}.\n")
    (docs / "costmodel-check-9.md").write_text(f"# A record\n\n{planted}.\n")
    assert too_long(tmp_path) == []
    (docs / "page.md").write_text(f"# A page\n\nShort one. {planted} more.\n")
    assert too_long(tmp_path) == [f"page.md:3: 41 words: {planted} more."]
