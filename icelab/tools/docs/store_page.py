"""docs/object-store.md's generated blocks: the study's planning claims on local disk and on an S3
store at each latency measured, the S3 requests behind them, and the canonical geometric means
on the store beside local disk.

Which runs: `icelab.analysis.store_runs` (the object store's own reference set,
`results/reference/object-store/`, and the local-disk `manifest_8mb` run measured nearest to it;
local disk's newest complete `canonical` run). Their figures: `icelab.analysis.store_figures`;
the text: the templates under `templates/store_page/`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import stats
from icelab.analysis import store_figures as figures
from icelab.analysis.planning_cases import machine
from icelab.analysis.store_runs import OBJECT_STORE, object_runs, place, planning_runs, where
from icelab.core.runs import Run
from icelab.tools.docs import canonical
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, run_minutes


def _planning(results: Path) -> list[Run]:
    return planning_runs(results / "reference")


def _store_canonical(results: Path) -> list[Run]:
    """The object store's newest complete canonical run, alone in a list (empty when there is none)."""
    return object_runs(results / "reference", "canonical")[-1:]


def runs_paragraph(results: Path) -> str:
    """Which runs the tables come from, their protocol and where their data was."""

    def figures_of(run: Run) -> dict[str, object]:
        p = run.config()["protocol"]
        return {"place": place(run), "provenance": provenance(run), "p": p, "minutes": run_minutes(run)}

    return render(
        "store_page/runs.md.j2",
        planning=[{**figures_of(r), "machine": machine(r)} for r in _planning(results)],
        canonical=[figures_of(r) for r in [canonical.load(results).run, *_store_canonical(results)]],
    )


def planning_table(results: Path) -> str:
    """Median planning ms of `QUERY` per window, one row per (place, variant)."""
    return render("store_page/planning.md.j2", **figures.planning(_planning(results)))


def claims_table(results: Path) -> str:
    """The study's planning claims at each place: Parquet's growth with the window, as ingested
    against 8 MB, and 8 MB against Parquet, at the run's narrow and wide windows."""
    return render("store_page/claims.md.j2", **figures.claims(_planning(results)))


def planning_note(results: Path) -> str:
    """For docs/planning.md, beside its claim that Iceberg plans faster than Parquet only for wide
    windows: what the same claim measured at each place."""
    return render("store_page/planning_note.md.j2", **figures.planning_note(_planning(results)))


def requests_table(results: Path) -> str:
    """Median S3 requests per plan (LIST, HEAD, GET) of each variant at the narrow and wide
    windows, per object-store run, with the delay proxy's own tally where there was one."""
    return render("store_page/requests.md.j2", **figures.request_counts(_planning(results)[1:]))


def reading(results: Path) -> str:
    """What the requests explain, in sentences of figures computed from the runs."""
    return render("store_page/reading.md.j2", **figures.reading(_planning(results)))


def canonical_table(results: Path) -> str:
    """Iceberg / Parquet geometric means over the canonical queries (planning, execution, total)
    for the initial and optimized setups, local disk beside the object store."""
    local, remote = canonical.load(results), _store_canonical(results)
    if not remote:
        raise LookupError(f"no complete canonical run under {results / 'reference' / OBJECT_STORE}")
    store = canonical.of_run(remote[0])
    rows = []
    for c in (local, store):
        for variant in (c.initial, c.optimized):
            intervals = [canonical.interval(c.versus_ci, variant, part) for part in stats.PARTS]
            rows.append(
                {
                    "place": place(c.run),
                    "setup": canonical.setup(variant),
                    "cells": [
                        (c.geomean(variant, part), ci)
                        for part, ci in zip(stats.PARTS, intervals, strict=True)
                    ],
                    "measured": measured_as(c.meta["protocol"], interval=all(intervals)),
                }
            )
    return render(
        "store_page/canonical.md.j2",
        rows=rows,
        protocols=[{"where": where(c.run), "p": c.meta["protocol"]} for c in (local, store)],
        study_initial=canonical.STUDY_INITIAL,
        totals=[{"ratio": c.geomean(c.initial, "total_ms"), "where": where(c.run)} for c in (local, store)],
        store=where(remote[0]),
        kinds=list(figures.REQUESTS),
        per_file=figures.per_file(remote[0]),
    )


def measured_as(protocol: dict, interval: bool) -> str:
    """What a row's figures are, from its run's protocol (run.json): `median of 5 rounds` (with
    how many executed when fewer did), or `1 execution` for a single round; `no interval` when
    the row has none (too few values for a bootstrap)."""
    rounds, executions = protocol["repetitions"], protocol["executions"]
    if rounds == 1:
        text = f"{executions} execution" + ("s" if executions > 1 else "") if executions else "1 round"
    else:
        text = f"median of {rounds} rounds" + (f" ({executions} executed)" if executions != rounds else "")
    return text if interval else f"{text}, no interval"


BLOCKS: dict[str, Callable[[Path], str]] = {
    "object-store-runs": runs_paragraph,
    "object-store-planning": planning_table,
    "object-store-claims": claims_table,
    "object-store-requests": requests_table,
    "object-store-reading": reading,
    "object-store-canonical": canonical_table,
    "planning-on-store": planning_note,
}
