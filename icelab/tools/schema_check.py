"""`icelab schema-check FILE`: is each proposed change safe, rejected by Iceberg, or a hazard?

The verdicts and their reasons are `icelab.schema.rules`; the file's form is
`icelab.schema.changes_file` (a `table:` section and a `changes:` list).

    icelab schema-check conf/schema_changes/example.yaml
    icelab schema-check conf/schema_changes/example.yaml --change 'drop payload'

Exit status: 0 when every change is safe, 1 when any is rejected or a hazard, 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from icelab.core.errors import UserError
from icelab.schema.changes_file import load
from icelab.schema.rules import SAFE, check, worst


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: print one verdict per change; 0 all safe, 1 any hazard or rejection, 2 bad input."""
    parser = argparse.ArgumentParser(prog="icelab schema-check", description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path, help="YAML with a 'table:' section and a 'changes:' list")
    parser.add_argument("--change", action="append", default=[], help="one more change, e.g. 'drop payload'")
    args = parser.parse_args(argv)
    try:
        state, changes = load(args.file, args.change)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    verdicts = check(state, changes)
    for v in verdicts:
        print(v.line())
    overall = worst(verdicts)
    print(f"overall: {overall}")
    return 0 if overall == SAFE else 1


if __name__ == "__main__":
    sys.exit(main())
