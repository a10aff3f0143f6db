"""`icelab <verb> [args]`: the commands users run on stored results and tables (no benchmark).

The main job stays `python run.py experiment=...`; `icelab --help` lists the verbs, and
`icelab <verb> --help` each verb's arguments.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# Each verb's line in `icelab --help`, in the order listed.
VERBS: dict[str, str] = {
    "charts": "redraw every chart of stored runs (PNG + SVG)",
    "report": "one self-contained HTML page of stored runs",
    "compare": "two runs compared per query (Mann-Whitney U, BH-adjusted)",
    "sessions": "A B A B sessions (new JVM each), then compared pooled",
    "contract": "one run checked against the results contract",
    "validate": "every run of a results directory checked",
    "reference": "copy complete runs into results/reference and redraw",
    "schema-check": "is each schema change safe, rejected or a hazard",
    "doctor": "manifest health and rewrite advice on any Iceberg table",
    "costmodel": "planning cost model: a table's planning per manifest layout (calibrate: fit one)",
    "decision-check": "score the doctor's pre-registered decision check on its stored run",
    "docs": "rewrite the figure blocks of README.md and docs/ from results",
}


def run(verb: str, argv: list[str]) -> int | None:
    """Run a verb of VERBS: its module's `main(argv)`.

    The module is imported only here: importing all of them costs about 2 s (Spark, matplotlib,
    scipy), and `icelab --help` or `icelab validate` would pay it every time.
    """
    match verb:
        case "charts":
            from icelab.charts.all import main
        case "report":
            from icelab.charts.report import main
        case "compare":
            from icelab.tools.compare import main
        case "sessions":
            from icelab.tools.sessions import main
        case "contract":
            from icelab.tools.contract import main
        case "validate":
            from icelab.tools.validate import main
        case "reference":
            from icelab.tools.reference import main
        case "schema-check":
            from icelab.tools.schema_check import main
        case "doctor":
            from icelab.tools.doctor import main
        case "costmodel":
            from icelab.tools.costmodel import main
        case "decision-check":
            from icelab.tools.decision_check import main
        case "docs":
            from icelab.tools.docs import main
        case _:
            raise ValueError(f"unknown verb {verb!r}")
    return main(argv)


def usage() -> str:
    """The verb list, as `icelab --help` prints it."""
    width = max(map(len, VERBS))
    lines = [f"  {verb:<{width}}  {text}" for verb, text in VERBS.items()]
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
    from icelab.core.py4j_log import keep_off_console

    keep_off_console()
    return int(run(verb, rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
