"""Command-line guard rails: unknown config choices become one line, before Hydra runs."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from icelab.errors import UserError

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("experiment", "dataset", "engine", "profile", "setup")


def choices(group: str) -> list[str]:
    """Selectable options of a config group (files starting with '_' are shared parts)."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml") if not p.stem.startswith("_"))


def check_choices(argv: Sequence[str]) -> None:
    """Reject `group=value` overrides naming an option that does not exist.

    Handles multirun lists (`dataset=small,medium`) and list selections
    (`profile=[as_ingested,rewrite_8mb]`); sweeps such as glob(...) are left to Hydra.
    """
    for arg in argv:
        match = re.fullmatch(r"[+~]*(\w+)=(.*)", arg)
        if not match or match.group(1) not in GROUPS:
            continue
        group, value = match.groups()
        if "(" in value:
            continue
        known = choices(group)
        for option in filter(None, (v.strip(" []") for v in value.split(","))):
            if option not in known:
                raise UserError(f"unknown {group} '{option}' (choose from: {', '.join(known)})")


def fail(message: str) -> None:
    """Print one line on stderr and exit with status 2."""
    print(f"icelab: error: {message}", file=sys.stderr)
    sys.exit(2)


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Turn a UserError raised inside the block into one line and exit status 2."""
    try:
        yield
    except UserError as exc:
        fail(str(exc))
