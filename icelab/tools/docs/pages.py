"""The registry of generated blocks: every page module, and from them every block by name.

Listed here rather than found by name at run time, so that a reader and import-linter see
which modules write the pages.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.tools.docs import (
    advice_quality,
    blind_check_page,
    budget,
    canonical,
    dataset,
    decision_check_page,
    doctor,
    effects,
    experiments,
    maintenance,
    metadata,
    planning,
    prerequisites,
    readme,
    reliability_page,
    results,
    schema,
    store_page,
    tutorials,
    warmup,
)

Generator = Callable[[Path], str]
PAGES = (
    readme,
    experiments,
    dataset,
    planning,
    maintenance,
    store_page,
    canonical,
    metadata,
    schema,
    results,
    effects,
    budget,
    doctor,
    reliability_page,
    blind_check_page,
    advice_quality,
    decision_check_page,
    tutorials,
    warmup,
    prerequisites,
)


def blocks() -> dict[str, Generator]:
    """Every block generator, by block name.

    Raises:
        ValueError: when two page modules name the same block.
    """
    found: dict[str, Generator] = {}
    for page in PAGES:
        for name, generator in page.BLOCKS.items():
            if name in found:
                raise ValueError(f"block '{name}' is generated twice ({page.__name__} and another module)")
            found[name] = generator
    return found
