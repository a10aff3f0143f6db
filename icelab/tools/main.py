"""`icelab <verb> [args]`: the commands users run on stored results and tables (no benchmark).

The main job stays `python run.py experiment=...`; `icelab --help` lists the verbs, and
`icelab <verb> --help` each verb's arguments.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple


class Verb(NamedTuple):
    """A verb: what runs it (its module's main(argv)) and its line in `icelab --help`."""

    run: Callable[[list[str]], int | None]
    text: str


# Each verb imports its module when it runs: importing all of them costs about 2 s (Spark,
# matplotlib, scipy), and `icelab --help` or `icelab validate` would pay it every time.


def _charts(argv: list[str]) -> int | None:
    from icelab.charts.all import main

    return main(argv)


def _report(argv: list[str]) -> int | None:
    from icelab.charts.report import main

    return main(argv)


def _compare(argv: list[str]) -> int | None:
    from icelab.tools.compare import main

    return main(argv)


def _sessions(argv: list[str]) -> int | None:
    from icelab.tools.sessions import main

    return main(argv)


def _contract(argv: list[str]) -> int | None:
    from icelab.tools.contract import main

    return main(argv)


def _validate(argv: list[str]) -> int | None:
    from icelab.tools.validate import main

    return main(argv)


def _reference(argv: list[str]) -> int | None:
    from icelab.tools.reference import main

    return main(argv)


def _schema_check(argv: list[str]) -> int | None:
    from icelab.tools.schema_check import main

    return main(argv)


def _doctor(argv: list[str]) -> int | None:
    from icelab.tools.doctor import main

    return main(argv)


def _costmodel(argv: list[str]) -> int | None:
    from icelab.tools.costmodel import main

    return main(argv)


def _docs(argv: list[str]) -> int | None:
    from icelab.tools.docs import main

    return main(argv)


VERBS: dict[str, Verb] = {
    "charts": Verb(_charts, "redraw every chart of stored runs (PNG + SVG)"),
    "report": Verb(_report, "one self-contained HTML page of stored runs"),
    "compare": Verb(_compare, "two runs compared per query (Mann-Whitney U, BH-adjusted)"),
    "sessions": Verb(_sessions, "A B A B sessions (new JVM each), then compared pooled"),
    "contract": Verb(_contract, "one run checked against the results contract"),
    "validate": Verb(_validate, "every run of a results directory checked"),
    "reference": Verb(_reference, "copy complete runs into results/reference and redraw"),
    "schema-check": Verb(_schema_check, "is each schema change safe, rejected or a hazard"),
    "doctor": Verb(_doctor, "manifest health and rewrite advice on any Iceberg table"),
    "costmodel": Verb(_costmodel, "planning cost model: a table's planning per manifest layout"),
    "docs": Verb(_docs, "rewrite the figure blocks of README.md and docs/ from results"),
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
    return int(VERBS[verb].run(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
