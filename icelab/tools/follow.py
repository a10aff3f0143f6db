"""Follow a tutorial page as written: run its `bash` blocks in page order, each in a shell at the
clone's root, and time each one. CI follows docs/tutorial-figure10.md this way on its fresh clone.

python -m icelab.tools.follow PAGE [--expect TEXT ...]

A block right after a `<!-- not followed: WHY -->` line is skipped, and WHY is printed. It
marks what CI cannot or need not do: the `git clone` that made the clone CI runs in, or an optional
run at the study's size. Every other block runs as written. The first block that fails stops the
walk (exit 1). So does an `--expect` text that no block printed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(?:<!-- not followed: (?P<why>.+?) -->\n+)?```bash\n(?P<code>.*?)```", re.S)


@dataclass(frozen=True)
class Step:
    """One `bash` block of the page: its commands, and why it is skipped (None: it runs)."""

    code: str
    skipped: str | None = None


def steps(page: str) -> list[Step]:
    """The page's `bash` blocks, in page order."""
    return [Step(m["code"], m["why"]) for m in BLOCK.finditer(page)]


def follow(page: Path, expect: list[str], cwd: Path = REPO) -> int:
    """Run the page's blocks in order; 0 when every block passed and printed every `expect`."""
    printed = []
    for n, step in enumerate(steps(page.read_text()), 1):
        print(f"--- block {n}: {step.code.strip()}", flush=True)
        if step.skipped:
            print(f"--- block {n}: not followed ({step.skipped})", flush=True)
            continue
        t0 = time.perf_counter()
        # stdout and stderr as one stream, shown as it comes: a long run shows its progress.
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", step.code],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            printed.append(line)
        code = proc.wait()
        minutes = (time.perf_counter() - t0) / 60
        print(f"--- block {n}: exit {code} in {minutes:.1f} min", flush=True)
        if code:
            print(f"{page}: block {n} failed (exit {code})", file=sys.stderr)
            return 1
    missing = [text for text in expect if text not in "".join(printed)]
    for text in missing:
        print(f"{page}: no block printed {text!r}", file=sys.stderr)
    return 1 if missing else 0


def main(argv: list[str] | None = None) -> int:
    """Command line: the page, and the texts its output must hold."""
    parser = argparse.ArgumentParser(prog="python -m icelab.tools.follow", description=__doc__.split("\n")[0])
    parser.add_argument("page", type=Path, help="a Markdown page, e.g. docs/tutorial-figure10.md")
    parser.add_argument("--expect", action="append", default=[], help="a text the output must hold")
    args = parser.parse_args(argv)
    if not args.page.is_file():
        parser.error(f"no such page: {args.page}")
    return follow(args.page, args.expect)


if __name__ == "__main__":
    sys.exit(main())
