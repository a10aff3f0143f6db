"""Follow a tutorial page as written: run its `bash` blocks in page order, each in a shell at the
clone's root, and time each one. CI follows both tutorials this way on its fresh clone.

python -m icelab.tools.follow PAGE [--expect TEXT ...]

What a block exports, the next block sees, as in one terminal. A comment line right before a
block says what the page expects of it:

- `<!-- not followed: WHY -->`: the block is skipped, and WHY is printed. It marks what CI cannot
  or need not do: the `git clone` that made the clone CI runs in, or an optional run at the
  study's size.
- `<!-- exits: N -->` or `<!-- exits: N or M -->`: the block must exit N (or M), as the page says,
  not only 0. The doctor's check exits 1 when it advises and 0 when it finds the table healthy:
  a verdict measured on the machine it runs on.

The first block that exits otherwise stops the walk (exit 1). So does an `--expect` text that no
block printed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(
    r"(?:<!-- not followed: (?P<why>.+?) -->\n+|<!-- exits: (?P<exits>\d+(?: or \d+)*) -->\n+)?"
    r"```bash\n(?P<code>.*?)```",
    re.S,
)


@dataclass(frozen=True)
class Step:
    """One `bash` block of the page: its commands, why it is skipped (None: it runs), and the exit
    codes the page expects of it."""

    code: str
    skipped: str | None = None
    exits: tuple[int, ...] = (0,)


def steps(page: str) -> list[Step]:
    """The page's `bash` blocks, in page order."""
    return [
        Step(m["code"], m["why"], tuple(int(c) for c in (m["exits"] or "0").split(" or ")))
        for m in BLOCK.finditer(page)
    ]


def _run(code: str, env: dict[str, str], cwd: Path, printed: list[bytes]) -> tuple[int, dict[str, str]]:
    """Run one block in bash; its exit code, and the environment it left (its exports)."""
    with tempfile.NamedTemporaryFile(prefix="icelab-follow-", suffix=".env") as saved:
        # The environment is saved on every exit of the block, failing ones too.
        script = f"trap 'env -0 > {saved.name}' EXIT\n{code}"
        # stdout and stderr as one stream, passed on as it comes, bytes as they are: a long run
        # shows its progress bars as in a terminal.
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            printed.append(chunk)
        code = proc.wait()
        pairs = Path(saved.name).read_bytes().decode().split("\0")
    left = dict(p.split("=", 1) for p in pairs if "=" in p)
    return code, left or env


def follow(page: Path, expect: list[str], cwd: Path = REPO) -> int:
    """Run the page's blocks in order; 0 when every block exited as the page expects and the
    blocks printed every `expect`."""
    printed: list[bytes] = []
    env = dict(os.environ)
    for n, step in enumerate(steps(page.read_text()), 1):
        print(f"--- block {n}: {step.code.strip()}", flush=True)
        if step.skipped:
            print(f"--- block {n}: not followed ({step.skipped})", flush=True)
            continue
        t0 = time.perf_counter()
        code, env = _run(step.code, env, cwd, printed)
        minutes = (time.perf_counter() - t0) / 60
        print(f"--- block {n}: exit {code} in {minutes:.1f} min", flush=True)
        if code not in step.exits:
            expected = " or ".join(map(str, step.exits))
            print(f"{page}: block {n} exited {code}, the page expects {expected}", file=sys.stderr)
            return 1
    output = b"".join(printed).decode(errors="replace")
    missing = [text for text in expect if text not in output]
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
