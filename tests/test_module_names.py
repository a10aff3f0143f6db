"""A module's file name says its job: a name shared by two modules of the package is one concept
at two layers, and docs/development.md says so (names it in backticks, as its paragraph "A file
name repeats only ..." does)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "icelab"
DOC = REPO / "docs" / "development.md"
# The places where one name per task, page, verb or config group is the rule the doc states:
# experiments/<task>.py, charts/<task>.py, tools/docs/<page>.py, tools/<verb>.py,
# core/config/<group>.py.
BY_RULE = {"experiments", "charts", "tools/docs", "tools", "core/config"}


def shared(paths: list[str]) -> dict[str, list[str]]:
    """Module paths (relative to the package) by file name, for names more than one module has."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if name != "__init__.py":
            by_name[name].append(path)
    return {name: found for name, found in by_name.items() if len(found) > 1}


def unexplained(paths: list[str], doc: str) -> list[str]:
    """The modules that share a file name and are neither under a by-rule directory nor named in
    the doc (as `dir/name.py`, or `icelab/name.py` at the top)."""
    named = set(re.findall(r"`([\w/]+\.py)`", doc))
    left = []
    for found in shared(paths).values():
        for path in found:
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            if parent not in BY_RULE and path not in named and f"icelab/{path}" not in named:
                left.append(path)
    return sorted(left)


def package_modules() -> list[str]:
    return [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")]


def test_every_shared_file_name_is_one_concept_the_doc_names() -> None:
    assert unexplained(package_modules(), DOC.read_text()) == []


def test_a_planted_module_with_a_taken_name_is_caught() -> None:
    planted = [*package_modules(), "health/planning.py", "datagen/shapes.py"]
    assert unexplained(planted, DOC.read_text()) == ["datagen/shapes.py", "health/planning.py"]
