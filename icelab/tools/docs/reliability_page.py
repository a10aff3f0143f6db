"""The generated block of docs/reliability.md: what each injected fault did to a stored run.

Figures come from `results/reference/faults/<case>/` (`icelab.analysis.fault_runs`): one run a
case (two for the medium comparison's clean case), made by the commands docs/reliability.md
lists, copied there from results/runs/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import fault_runs, stall_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance

# The table's rows, in order; each is a directory under results/reference/faults/ and a row of
# the template, which says where the fault is injected.
CASES = (
    "store-slowdown",
    "store-reset",
    "store-stall",
    "store-outage-restart",
    "store-outage-smoke",
    "store-outage-gone",
    "store-lost-overhead",
    "store-lost-answers",
    "worker-lost-survivor",
    "worker-lost-all",
    "workers-isolated",
)


def fault_table(results: Path) -> str:
    """One row a fault case: where injected, what the run did, rows kept and marked, answers, time."""
    found = fault_runs.fault_runs(results / "reference" / "faults", CASES)
    return render(
        "reliability/faults.md.j2",
        runs=[{"f": f, "provenance": provenance(f.run)} for f in found],
        dataset=found[0].run.env().get("dataset", {}),
    )


# The medium comparison: two clean runs and one with 1% 503s, under these case directories.
MEDIUM_CLEAN, MEDIUM_FAULTED = "medium-clean", "medium-slowdown"


def medium_table(results: Path) -> str:
    """The faulted medium run beside the two clean ones, and the clean runs beside each other."""
    check = fault_runs.noise_check(results / "reference" / "faults", MEDIUM_CLEAN, MEDIUM_FAULTED)
    return render(
        "reliability/medium.md.j2",
        check=check,
        pairs=[
            ("clean 1 vs clean 2 (the session's noise)", check.noise),
            ("clean 1 vs 1% 503s", check.against[0]),
            ("clean 2 vs 1% 503s", check.against[1]),
        ],
        runs=[provenance(r) for r in (*check.clean, check.faulted.run)],
        dataset=check.faulted.run.env().get("dataset", {}),
    )


# The external stalls: a process stopped, or made to collect garbage, from outside the
# measurements, each beside a clean run of the same settings (a case run with the delay proxy's
# latency, or on a cluster, has a clean run of those settings).
STALL_CASES = {
    "store-stopped": "clean",
    "driver-stopped": "clean-latency",
    "jvm-paused": "clean",
    "store-stopped-proxy": "clean-proxy",
    "jvm-gc-storm": "clean-local",
    "executor-stopped": "clean-standalone-2x1",
    "executor-gc-storm": "clean-standalone",
}


def stall_table(results: Path, folder: str = "stalls") -> str:
    """One row a stalled row of each stall case under `results/reference/<folder>`: its mark, its
    cell's median and the clean run's."""
    cleans, found = stall_runs.stall_runs(results / "reference" / folder, STALL_CASES)
    return render(
        "reliability/stalls.md.j2",
        runs=[vars(s) | {"provenance": provenance(s.run), "clean": STALL_CASES[s.case]} for s in found],
        cleans={c: provenance(run) for c, run in cleans.items()},
        folder=folder,
    )


# The looks at the stall cases, each a folder of results/reference/ and the block
# `reliability-<folder>` (docs/reliability.md): the first; the second, after the retake moved into
# the stalled row's round; the third, with three executed rounds and an executed warm-up round.
STALL_LOOKS = ("stalls", "stalls-in-round", "stalls-executed")


def _stall_block(folder: str) -> Callable[[Path], str]:
    return lambda results: stall_table(results, folder)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "reliability-faults": fault_table,
    **{f"reliability-{folder}": _stall_block(folder) for folder in STALL_LOOKS},
    "reliability-medium": medium_table,
}
