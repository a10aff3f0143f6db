"""`icelab docs [--check]`: rewrite the generated blocks of README.md and docs/ from stored results.

A block is the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`; its
generator is `BLOCKS[NAME]` of one page module of this package (`readme`, `planning`, ...; the
registry in `pages` lists them), a function of the results directory that reads
`results/reference/` only.
`--check` rewrites nothing and exits 1 when a committed block differs from what its generator
writes (a figure typed or edited by hand, or results changed without `make docs`). Either way it
exits 1 past the site's limits (`site_rules.breaches`): words in all, per page, per sentence.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import re
import sys
from pathlib import Path

from icelab.core.results import write_atomic
from icelab.tools.docs.pages import blocks

REPO = Path(__file__).resolve().parents[3]
BLOCK = re.compile(
    r"(<!-- generated:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S
)


class UnknownBlock(LookupError):
    """A block in a page that no generator writes."""


Stamp = tuple[str, tuple[tuple[str, str], ...]]
# Blocks written in this process, by block name and the stamp of the files they were written
# from: a generator is a function of results/reference alone, so while no file there changes
# its block is the same text (a process that renders twice, as the tests do, computes once).
_WRITTEN: dict[tuple[str, Stamp], str] = {}


def stamp(reference: Path) -> Stamp:
    """Every file under `reference` (where it really lives, a link followed) by its path and a
    digest of its bytes: a file rewritten, planted or removed changes it. Bytes, not modification
    times, which the file system keeps to a few milliseconds (the reference set: 9 MB, under 0.1 s)."""
    root = os.path.realpath(reference)
    files = []
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as f:
                files.append((os.path.relpath(path, root), hashlib.file_digest(f, "blake2b").hexdigest()))
    return root, tuple(sorted(files))


def render(text: str, results: Path, where: str, now: Stamp | None = None) -> str:
    """`text` with every generated block rewritten (`now`: the stamp of results/reference, when
    the caller took it for every page at once).

    Raises:
        UnknownBlock: for a block no generator knows, naming the file.
    """

    generators = blocks()
    now = now or stamp(results / "reference")

    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in generators:
            known = ", ".join(sorted(generators))
            raise UnknownBlock(f"{where}: no generator for block '{name}' (known: {known})")
        if (name, now) not in _WRITTEN:
            _WRITTEN[(name, now)] = generators[name](results)
        return match.group(1) + _WRITTEN[(name, now)] + match.group(4)

    return BLOCK.sub(body, text)


def documents(root: Path) -> list[Path]:
    """README.md and every page under docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def changed(text: str, new: str, most: int = 12) -> list[str]:
    """The first `most` lines of a unified diff from `text` to `new`: which figure moved, so a
    check that fails where nobody can rerun it (CI) still says what differed."""
    diff = difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True), n=0)
    lines = [line if line.endswith("\n") else line + "\n" for line in diff]
    return lines[2 : 2 + most]


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with --check, compare) every generated block; exit 1 when --check finds a difference."""
    p = argparse.ArgumentParser(prog="icelab docs", description=main.__doc__)
    p.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 on any difference")
    p.add_argument("--root", type=Path, default=REPO, help="the checkout whose README and docs/ to rewrite")
    args = p.parse_args(argv)
    results = args.root / "results"
    now = stamp(results / "reference")
    stale: list[tuple[Path, list[str]]] = []
    for path in documents(args.root):
        text = path.read_text()
        try:
            new = render(text, results, str(path.relative_to(args.root)), now)
        except UnknownBlock as exc:
            print(f"icelab: error: {exc.args[0]}", file=sys.stderr)
            return 2
        except LookupError as exc:  # a block whose stored results are missing
            print(f"icelab: error: {path.relative_to(args.root)}: {exc.args[0]}", file=sys.stderr)
            return 2
        if new != text:
            stale.append((path.relative_to(args.root), changed(text, new)))
            if not args.check:
                write_atomic(path, new)
    verb = "differs from its results" if args.check else "rewritten"
    for path, lines in stale:
        print(f"docs: {path}: {verb}")
        if args.check:
            print("".join(f"  {line}" for line in lines), end="")
    if not stale:
        print(f"docs: {len(documents(args.root))} files up to date with results/reference")
    # Imported here: the rules read every page, after the blocks are written.
    from icelab.tools.docs import site_rules

    print(site_rules.counts(args.root).line())
    misplaced = site_rules.history_words(args.root)
    for found in misplaced:
        print(f"docs: outside History, how a figure was reached: {found}")
    over = site_rules.breaches(args.root)
    for found in over:
        print(f"docs: {found}")
    return 1 if (stale and args.check) or misplaced or over else 0


if __name__ == "__main__":
    sys.exit(main())
