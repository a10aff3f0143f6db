"""Markdown the pages are written in: tables, lists in a sentence, and the page templates.

A sentence that carries numbers is template text (Jinja2, `templates/<page>/<block>.md.j2`) with
named figures, computed by the page module; the templates format them with the filters of
`icelab.core.units`. A page prints a paragraph on one line; its template may wrap it: a line
break followed by indentation reads as one space (`{%-` / `-%}` remove even that).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import jinja2

from icelab.core import units

TEMPLATES = Path(__file__).with_name("templates")
SOFT_BREAK = re.compile(r"[ \t]*\n[ \t]+")


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table, one line per row, ending in a newline."""
    return body([header, ["---"] * len(header)]) + body(rows)


def body(rows: Iterable[Sequence[object]]) -> str:
    """Markdown table rows, each ending in a newline: a template writes the header itself."""
    return "".join("| " + " | ".join(str(cell) for cell in row) + " |\n" for row in rows)


def listing(items: Sequence[object]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def sep(loop: jinja2.runtime.LoopContext, between: str = ", ", last: str | None = " and ") -> str:
    """What follows an item of a `{% for %}` list in a sentence: `, `, then ` and ` before the last
    item (with last=None, `between` throughout), nothing after it."""
    if loop.last:
        return ""
    return last if last is not None and loop.revindex == 2 else between


def warmup_kind(warmups_execute: bool | str | None) -> str:
    """What a run's warm-up rounds did, from its `protocol.warmups_execute`."""
    if warmups_execute is True:
        return "executed"
    return f"executed up to {warmups_execute}" if warmups_execute else "planning only"


class _FoldingLoader(jinja2.FileSystemLoader):
    """Template sources with their soft line breaks folded into spaces."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, object]:
        source, filename, uptodate = super().get_source(environment, template)
        return SOFT_BREAK.sub(" ", source), filename, uptodate


ENV = jinja2.Environment(
    loader=_FoldingLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,  # a figure the page module did not compute fails the block
    keep_trailing_newline=True,
    autoescape=False,  # Markdown, not HTML
)
# Every unit formatter is a filter of the same name (`{{ x | ms }}`).
UNIT_FILTERS = (
    "num",
    "ratio",
    "interval",
    "pct",
    "size",
    "ms",
    "ms_span",
    "minutes",
    "days",
    "signed",
    "spread",
)
ENV.filters.update({name: getattr(units, name) for name in (*UNIT_FILTERS, "change", "spelled")})
ENV.filters.update(listing=listing, body=body, warmup_kind=warmup_kind)
ENV.globals["sep"] = sep


def render(template: str, **figures: object) -> str:
    """The text of `templates/<template>` with `figures`."""
    return ENV.get_template(template).render(**figures)
