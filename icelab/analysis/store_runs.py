"""Which stored runs set the object store beside local disk: the store's reference set and the
local-disk run measured nearest to it, and where each run's data was (env.json's `storage`).

The object store's runs are a reference set of their own, `results/reference/object-store/` (so
the local figures and charts never pick them up): one `manifest_8mb` run per latency (the newest
complete one of each) and the newest `canonical` run. Local disk is the reference set's complete
`manifest_8mb` run of the same dataset started nearest in time to the store's runs.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from icelab.core.runs import Run, find_runs

OBJECT_STORE = "object-store"  # results/reference/<this>: the object store's reference set


def object_runs(reference: Path, experiment: str) -> list[Run]:
    """The object-store reference set's complete runs of `experiment` on `s3a://` data, oldest first
    (`reference`: the results' reference directory)."""
    return [
        r
        for r in find_runs(reference / OBJECT_STORE)
        if r.experiment == experiment and r.complete and storage(r).get("kind") == "object"
    ]


def storage(run: Run) -> dict:
    """env.json's `storage` (a run from before storage was recorded ran on local disk)."""
    return run.env().get("storage") or {"kind": "local"}


def on_store(run: Run) -> bool:
    """Whether the run's data was on an object store."""
    return storage(run).get("kind") == "object"


def latency(run: Run) -> float:
    """The latency added to every round trip to the store, in ms (0 for none, and for local disk)."""
    return float(storage(run).get("latency_ms") or 0.0)


def place(run: Run) -> str:
    """`local disk`, `RGW, 0 ms`, `RGW, +20 ms (proxy)`: where a run's data was, from env.json."""
    s = storage(run)
    if not on_store(run):
        return "local disk"
    ms = latency(run)
    return f"{server(run)}, 0 ms" if ms == 0 else f"{server(run)}, +{ms:g} ms ({s.get('latency_mechanism')})"


def where(run: Run) -> str:
    """`on local disk`, `on RGW at 0 ms`, `on RGW with 20 ms added (proxy)`: `place` in a sentence."""
    if not on_store(run):
        return "on local disk"
    ms = latency(run)
    mechanism = storage(run).get("latency_mechanism")
    return f"on {server(run)} at 0 ms" if ms == 0 else f"on {server(run)} with {ms:g} ms added ({mechanism})"


def server(run: Run) -> str:
    """`RGW`: the store's server, from env.json (`ceph-rgw 19.2` -> `RGW`)."""
    return str(storage(run).get("server") or "S3").split(" ")[0].removeprefix("ceph-").upper()


def planning_runs(reference: Path) -> list[Run]:
    """Local disk's manifest_8mb run nearest in time to the object store's (`nearest_local`),
    then the object store's newest per latency.

    Raises:
        LookupError: when no local-disk run of the store's dataset is stored or the store has no run.
    """
    newest = {latency(r): r for r in object_runs(reference, "manifest_8mb")}  # oldest first: newest wins
    if not newest:
        raise LookupError(f"no complete manifest_8mb run under {reference / OBJECT_STORE}")
    store = [*newest.values()]
    check_same_tables(store)  # before choosing the local run by their dataset
    runs = [nearest_local(reference, store), *(newest[ms] for ms in sorted(newest))]
    check_same_tables(runs)
    return runs


def nearest_local(reference: Path, others: list[Run]) -> Run:
    """The complete local-disk manifest_8mb reference run of the object-store runs' dataset that
    started nearest in time to them: the same cell measured on this shared machine days apart
    differs by more than a quarter in some layouts (docs/costmodel.md, the same cells in
    separate runs), so the local row is the run measured nearest to the store's rows.

    Raises:
        LookupError: when no such run is stored.
    """
    dataset = others[0].meta().get("dataset")
    local = [
        r
        for r in find_runs(reference)
        if r.experiment == "manifest_8mb"
        and r.complete
        and storage(r).get("kind") == "local"
        and r.meta().get("dataset") == dataset
    ]
    if not local:
        raise LookupError(f"no complete local-disk manifest_8mb run of {dataset} under {reference}")
    when = [started(r) for r in others]
    return min(local, key=lambda r: min(abs(started(r) - t) for t in when))


def started(run: Run) -> datetime:
    """When a run started, from its id (`20261125T113821Z-75bccc`)."""
    return datetime.strptime(run.run_id.split("-")[0], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)


def check_same_tables(runs: list[Run]) -> None:
    """Every run must have measured the same dataset and windows, or a side-by-side table lies.

    Raises:
        ValueError: naming the first run that differs and what.
    """
    first = runs[0].meta()
    for run in runs[1:]:
        for what in ("dataset", "windows"):
            if run.meta().get(what) != first.get(what):
                raise ValueError(f"{run.run_id} and {runs[0].run_id} measured different {what}")
