"""A claim is a checked predicate: a verdict a page types stands only while the data supports it.

A page module states each verdict as a condition over the figures it prints; a result that no
longer satisfies one stops the page (`ClaimError`) rather than print the verdict beside numbers
that contradict it.
"""

from __future__ import annotations


class ClaimError(ValueError):
    """A typed verdict of a page that the reference results no longer support."""


def require(condition: bool, claim: str, page: str = "docs/planning.md") -> None:
    """Raise `ClaimError` naming `claim` (and the page that types it) when the results contradict it."""
    if not condition:
        raise ClaimError(f"{page}: the reference results no longer support: {claim}")
