"""The list of experiments, generated from `conf/experiment/`: in commands.md each file's name,
its command and the first clause of its header comment; in configuration.md the names alone."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from icelab.tools.docs.dataset import conf_dir
from icelab.tools.docs.markdown import render

# Header lines that are commands, not the description: `python run.py ...`, `or: icelab ...`,
# and a parenthesis saying what the command equals.
_COMMAND = re.compile(r"^(python run\.py|or: |\(|icelab )")


def header(path: Path) -> tuple[str, str]:
    """An experiment file's command (its header's first `python run.py` line) and the first
    clause of the header's description."""
    lines = []
    for raw in path.read_text().splitlines():
        if not raw.startswith("#"):
            break
        lines.append(raw.lstrip("#").strip())
    command = next((line for line in lines if line.startswith("python run.py")), "").split(",")[0]
    prose = " ".join(line for line in lines[1:] if line and not _COMMAND.match(line))
    return command, first_clause(prose)


def first_clause(prose: str) -> str:
    """`prose` up to its first `.`, `:` or `;` outside parentheses that a space follows."""
    depth = 0
    for i, char in enumerate(prose):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ".:;" and prose[i + 1 : i + 2] in (" ", ""):
            return prose[:i]
    return prose


def _files(results: Path) -> list[Path]:
    return sorted((conf_dir(results) / "experiment").glob("*.yaml"))


def experiment_list(results: Path) -> str:
    """One row per file of conf/experiment/, in name order."""
    rows = [
        {"name": path.stem, "command": command, "what": what}
        for path in _files(results)
        for command, what in [header(path)]
    ]
    return render("experiments/list.md.j2", rows=rows)


def experiment_names(results: Path) -> str:
    """The names of conf/experiment/'s files, in name order, linked to commands.md's table."""
    return render("experiments/names.md.j2", names=[path.stem for path in _files(results)])


BLOCKS: dict[str, Callable[[Path], str]] = {
    "experiment-list": experiment_list,
    "experiment-names": experiment_names,
}
