"""`icelab <verb> [args]`: the commands users run on stored results and tables (no benchmark).

The main job stays `python run.py experiment=...`; `icelab --help` lists the verbs, and
`icelab <verb> --help` each verb's arguments.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# verb -> (module with main(argv) -> int, one line for --help). Modules import on use only,
# so `icelab validate` never loads matplotlib.
VERBS: dict[str, tuple[str, str]] = {
    "charts": ("icelab.charts.all", "redraw every chart of stored runs (PNG + SVG)"),
    "report": ("icelab.charts.report", "one self-contained HTML page of stored runs"),
    "compare": ("icelab.tools.compare", "two runs compared per query (Mann-Whitney U, BH-adjusted)"),
    "sessions": ("icelab.tools.sessions", "A B A B sessions (new JVM each), then compared pooled"),
    "contract": ("icelab.tools.contract", "one run checked against the results contract"),
    "validate": ("icelab.tools.validate", "every run of a results directory checked"),
    "reference": ("icelab.tools.reference", "copy complete runs into results/reference and redraw"),
    "schema-check": ("icelab.tools.schema_check", "is each schema change safe, rejected or a hazard"),
    "doctor": ("icelab.tools.doctor", "manifest health and rewrite advice on any Iceberg table"),
    "costmodel": ("icelab.tools.costmodel", "planning cost model: a table's planning per manifest layout"),
    "docs": ("icelab.tools.docs", "rewrite the figure blocks of README.md and docs/ from results"),
}


def usage() -> str:
    """The verb list, as `icelab --help` prints it."""
    width = max(map(len, VERBS))
    lines = [f"  {verb:<{width}}  {text}" for verb, (_, text) in VERBS.items()]
    return "usage: icelab <verb> [args]   (icelab <verb> --help)\n\nverbs:\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch `argv[0]` to its tool's `main(argv[1:])`; exit 2 with one line for an unknown verb."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if args else 2
    verb, rest = args[0], args[1:]
    if verb not in VERBS:
        print(f"icelab: error: unknown verb '{verb}' (use one of: {', '.join(VERBS)})", file=sys.stderr)
        return 2
    module = importlib.import_module(VERBS[verb][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
