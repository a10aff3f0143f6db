"""The README is a front door: at most 120 lines, and its status table names every tool.

The verbs come from the CLI's own registry (`icelab.tools.main.VERBS`, what `icelab --help`
lists), so a new verb without a row in the table fails here."""

from __future__ import annotations

import re
from pathlib import Path

from icelab.tools.main import VERBS

README = Path(__file__).resolve().parents[1] / "README.md"
MAX_LINES = 120


def status_table(text: str) -> str:
    """The table under `## Status`, up to the next heading."""
    section = text.split("\n## Status\n", 1)[1]
    return section.split("\n## ", 1)[0]


def unnamed(table: str, verbs: list[str]) -> list[str]:
    """The verbs no row of `table` names as `icelab <verb>`."""
    named = set(re.findall(r"`icelab ([a-z-]+)", table))
    return [verb for verb in verbs if verb not in named]


def test_the_readme_is_at_most_120_lines() -> None:
    assert len(README.read_text().splitlines()) <= MAX_LINES


def test_the_status_table_names_every_icelab_verb_and_the_other_tools() -> None:
    table = status_table(README.read_text())
    assert unnamed(table, list(VERBS)) == []
    for tool in ("python run.py experiment=", "fault tests", "doctor", "cost model"):
        assert tool in table, tool


def test_a_verb_without_a_row_is_caught() -> None:
    table = status_table(README.read_text())
    assert unnamed(table, [*VERBS, "new-verb"]) == ["new-verb"]
