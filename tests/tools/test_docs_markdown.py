"""The page templates' rules: a wrapped line reads as one space, a missing figure fails the block,
and lists in a sentence read `a, b and c`."""

import jinja2
import pytest

from icelab.tools.docs import markdown


def test_a_soft_line_break_reads_as_one_space_and_a_blank_line_stays() -> None:
    text = "One {{ n|num }}\n  wrapped line.\n\nNext\n    {%- if n %}, joined{% endif %}.\n"
    template = markdown.ENV.from_string(markdown.SOFT_BREAK.sub(" ", text))
    assert template.render(n=1234) == "One 1,234 wrapped line.\n\nNext, joined.\n"


@pytest.mark.parametrize("text", ["{{ missing }}", "{{ figures.absent }}", "{{ missing|num }}"])
def test_a_figure_the_page_did_not_compute_fails_the_block(text: str) -> None:
    # Through a filter the undefined value fails as it is formatted (TypeError), not silently.
    with pytest.raises((jinja2.UndefinedError, TypeError)):
        markdown.ENV.from_string(text).render(figures={})


@pytest.mark.parametrize(
    ("items", "expected"), [(["a"], "a"), (["a", "b"], "a and b"), (["a", "b", "c"], "a, b and c")]
)
def test_lists_in_a_sentence(items: list[str], expected: str) -> None:
    assert markdown.listing(items) == expected
    looped = markdown.ENV.from_string("{% for x in items %}{{ x }}{{ sep(loop) }}{% endfor %}")
    assert looped.render(items=items) == expected


def test_every_page_template_parses() -> None:
    for path in sorted(markdown.TEMPLATES.glob("*/*.md.j2")):
        markdown.ENV.get_template(path.relative_to(markdown.TEMPLATES).as_posix())
