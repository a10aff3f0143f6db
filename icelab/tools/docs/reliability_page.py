"""The blocks of docs/reliability.md and docs/history-reliability.md: what each injected fault or
stall did to its stored run under `results/reference/` (`icelab.analysis.fault_runs`, `stall_runs`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import fault_runs, stall_runs
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import commit_state, provenance

# The fault table's rows, in order: each a directory under results/reference/faults/ and a row
# of the template, which says where the fault is injected.
CASES = tuple(
    """store-slowdown store-reset store-stall store-outage-restart store-outage-smoke store-outage-gone
    store-lost-overhead store-lost-answers worker-lost-survivor worker-lost-all workers-isolated""".split()  # noqa: SIM905
)
# The medium comparison: two clean runs and one with 1% 503s, under these case directories.
MEDIUM_CLEAN, MEDIUM_FAULTED = "medium-clean", "medium-slowdown"
# Each external stall case beside the clean case of its settings (proxy latency, cluster).
STALL_CASES = {
    "store-stopped": "clean",
    "driver-stopped": "clean-latency",
    "jvm-paused": "clean",
    "store-stopped-proxy": "clean-proxy",
    "jvm-gc-storm": "clean-local",
    "executor-stopped": "clean-standalone-2x1",
    "executor-gc-storm": "clean-standalone",
}
# The looks at the stall cases, each a folder of results/reference/ and the block
# `reliability-<folder>`: the first; the retake moved into the stalled row's round; three
# executed rounds and an executed warm-up round.
STALL_LOOKS = ("stalls", "stalls-in-round", "stalls-executed")


def fault_table(results: Path) -> str:
    """One row a fault case: where injected, what the run did, rows kept and marked, answers, time."""
    found = fault_runs.fault_runs(results / "reference" / "faults", CASES)
    return render("reliability/faults.md.j2", runs=found, dataset=found[0].run.env().get("dataset", {}))


def medium_table(results: Path) -> str:
    """The faulted medium run beside the two clean ones, and the clean runs beside each other."""
    check = fault_runs.noise_check(results / "reference" / "faults", MEDIUM_CLEAN, MEDIUM_FAULTED)
    runs = [provenance(r) for r in (*check.clean, check.faulted.run)]
    return render(
        "reliability/medium.md.j2", check=check, runs=runs, dataset=check.faulted.run.env()["dataset"]
    )


def stall_table(results: Path, folder: str = "stalls") -> str:
    """The verdict on the stalled cells of the stall cases under `results/reference/<folder>`: how
    many keep the clean run's median within the session's noise, and each that does not."""
    cleans, found = stall_runs.stall_runs(results / "reference" / folder, STALL_CASES)
    judged = [(s.case, c) for s in found for c in s.stalled if c.agrees is not None]
    return render(
        "reliability/stalls.md.j2",
        judged=judged,
        missed=[(case, c) for case, c in judged if not c.agrees],
        marked=sum(sum(s.marked.values()) for s in found),
        retakes=sum(s.retakes for s in found),
        incomplete=[s.case for s in found if s.status != "complete"],
        commits=sorted({commit_state(r) for r in [*cleans.values(), *(s.run for s in found)]}),
        folder=folder,
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "reliability-faults": fault_table,
    **{f"reliability-{f}": (lambda results, f=f: stall_table(results, f)) for f in STALL_LOOKS},
    "reliability-medium": medium_table,
}
