"""`icelab contract <run dir | experiment dir | run id>`: check one run against the results contract.

The contract itself (columns, required files, the checks) is `icelab.core.contract`.
"""

from __future__ import annotations

import sys

import pyarrow.parquet as pq

from icelab.bench.stalls import counts, counts_text, outages
from icelab.core import run_state
from icelab.core.contract import MEASUREMENTS, validate
from icelab.core.runs import resolve_run, run_parser


def outages_text(events: list[dict]) -> str:
    """`; 1 store outage (overhead pairs: back after 7.1 s)`, from run.json's `store_events`;
    empty when the run met none."""
    if not events:
        return ""
    told = ", ".join(f"{e['phase']}: {e['outcome']} after {e['seconds']:g} s" for e in events)
    return f"; {len(events)} store outage{'s' if len(events) > 1 else ''} ({told})"


def main(argv: list[str] | None = None) -> int:
    """Validate a run directory (or the newest run of an experiment); exit 1 on a breach."""
    parser = run_parser("icelab contract", main.__doc__, incomplete_flag=False)
    parser.add_argument("--allow-failures", action="store_true", help="failed queries are not a breach")
    args = parser.parse_args(argv)
    # The newest run whatever its status: a checker must report a failed run, not skip to an older one.
    run = resolve_run(args.path, include_incomplete=True)
    if run is None:
        return 2
    run_dir = run.path
    problems = validate(run_dir, args.allow_failures)
    for problem in problems:
        print(f"contract: {run_dir}: {problem}")
    if not problems:
        table = pq.read_table(run_dir / MEASUREMENTS, columns=["faulted", "faults", "retake"])
        rows = table.to_pylist()
        faulted = sum(1 for row in rows if row["faulted"])
        marked = f", {faulted} marked faulted" if faulted else ""
        retaken = sum(1 for row in rows if row["retake"])
        events = run_state.read(run_dir).get(run_state.EVENTS) or []
        said = counts_text(counts(rows), retaken, outages(rows))
        print(f"contract: {run_dir}: ok ({table.num_rows} rows{marked}; {said}{outages_text(events)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
