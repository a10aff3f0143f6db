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
