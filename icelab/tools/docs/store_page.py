"""docs/object-store.md's generated blocks: the study's planning claims on local disk and on an S3
store at each latency measured, the S3 requests behind them, and the canonical geometric means
on the store beside local disk.

Local disk is the reference set's complete `manifest_8mb` run of the same dataset started
nearest in time to the object store's runs, and its newest complete `canonical` run
(`results/reference/`); the object store's runs are a reference set of their own,
`results/reference/object-store/` (so the local figures and charts never pick them up), one
`manifest_8mb` run per latency (the newest complete one of each) and the newest `canonical` run.
Medians, growth ratios and geometric means come from `icelab.analysis.stats`, as the experiments
compute them; storage kind, latency and its mechanism from each run's env.json.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from icelab.analysis import stats
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run, find_runs
from icelab.core.units import num, ratio
from icelab.tools.docs import canonical, planning
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.sources import provenance, run_minutes

OBJECT_STORE = "object-store"  # results/reference/<this>: the object store's reference set
QUERY = planning.QUERY
PARQUET = planning.PARQUET
AS_INGESTED = planning.AS_INGESTED
EIGHT_MB = planning.STUDY_TARGET
REQUESTS = {"LIST": "s3_list_requests", "HEAD": "s3_head_requests", "GET": "s3_get_requests"}


def object_runs(results: Path, experiment: str) -> list[Run]:
    """The object-store reference set's complete runs of `experiment` on `s3a://` data, oldest first."""
    return [
        r
        for r in find_runs(results / "reference" / OBJECT_STORE)
        if r.experiment == experiment and r.complete and storage(r).get("kind") == "object"
    ]


def storage(run: Run) -> dict:
    """env.json's `storage` (a run from before storage was recorded ran on local disk)."""
    return run.env().get("storage") or {"kind": "local"}


def latency(run: Run) -> float:
    return float(storage(run).get("latency_ms") or 0.0)


def place(run: Run) -> str:
    """`local disk`, `RGW, 0 ms`, `RGW, +20 ms (proxy)`: where a run's data was, from env.json."""
    s = storage(run)
    if s.get("kind") != "object":
        return "local disk"
    server = str(s.get("server") or "S3").split(" ")[0].removeprefix("ceph-").upper()
    ms = latency(run)
    return f"{server}, 0 ms" if ms == 0 else f"{server}, +{ms:g} ms ({s.get('latency_mechanism')})"


def planning_runs(results: Path) -> list[Run]:
    """Local disk's manifest_8mb run nearest in time to the object store's (`nearest_local`),
    then the object store's newest per latency.

    Raises:
        LookupError: when no local-disk run of the store's dataset is stored or the store has no run.
    """
    newest = {latency(r): r for r in object_runs(results, "manifest_8mb")}  # oldest first: newest wins
    if not newest:
        raise LookupError(f"no complete manifest_8mb run under {results / 'reference' / OBJECT_STORE}")
    stored = [*newest.values()]
    _check_same_tables(stored)  # before choosing the local run by their dataset
    return [nearest_local(results, stored), *(newest[ms] for ms in sorted(newest))]


def nearest_local(results: Path, others: list[Run]) -> Run:
    """The complete local-disk manifest_8mb reference run of the object-store runs' dataset that
    started nearest in time to them: the same cell measured on this shared machine days apart
    differs by more than a quarter in some layouts (docs/metadata-scale.md, the same cells in
    separate runs), so the local row is the run measured nearest to the store's rows.

    Raises:
        LookupError: when no such run is stored.
    """
    dataset = others[0].meta().get("dataset")
    local = [
        r
        for r in find_runs(results / "reference")
        if r.experiment == "manifest_8mb"
        and r.complete
        and storage(r).get("kind") == "local"
        and r.meta().get("dataset") == dataset
    ]
    if not local:
        raise LookupError(
            f"no complete local-disk manifest_8mb run of {dataset} under {results / 'reference'}"
        )
    when = [started(r) for r in others]
    return min(local, key=lambda r: min(abs(started(r) - t) for t in when))


def started(run: Run) -> datetime:
    """When a run started, from its id (`20261125T113821Z-75bccc`)."""
    return datetime.strptime(run.run_id.split("-")[0], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)


def _check_same_tables(runs: list[Run]) -> None:
    """Every run must have measured the same dataset and windows, or a side-by-side table lies."""
    first = runs[0].meta()
    for run in runs[1:]:
        for what in ("dataset", "windows"):
            if run.meta().get(what) != first.get(what):
                raise ValueError(f"{run.run_id} and {runs[0].run_id} measured different {what}")


def measured(run: Run) -> pd.DataFrame:
    """The run's rows that count (`rows.counted`: no warm-ups, status ok), read once per
    content of the file (the blocks ask many times)."""
    return stored(run).counted()


def _requests(run: Run, variant: str, window: str) -> dict[str, float]:
    """Median S3 requests per measured plan of `QUERY` at one (variant, window), by kind."""
    m = measured(run)
    rows = m[
        (m["query_id"] == QUERY)
        & (m["variant"] == variant)
        & (m["window"] == window)
        & (~m["executed"].astype(bool))
    ]
    return {kind: float(rows[column].median()) for kind, column in REQUESTS.items()}


def runs_paragraph(results: Path) -> str:
    """Which runs the tables come from, their protocol and where their data was."""

    def figures(run: Run) -> dict[str, object]:
        p = run.config()["protocol"]
        return {"place": place(run), "provenance": provenance(run), "p": p, "minutes": run_minutes(run)}

    return render(
        "store_page/runs.md.j2",
        planning=[{**figures(r), "machine": planning.machine(r)} for r in planning_runs(results)],
        canonical=[
            figures(r) for r in [canonical.load(results).run, *object_runs(results, "canonical")[-1:]]
        ],
    )


def planning_table(results: Path) -> str:
    """Median planning ms of `QUERY` per window, one row per (place, variant)."""
    runs = planning_runs(results)
    _check_same_tables(runs)
    wins = planning.windows(runs[0])
    rows = []
    for run in runs:
        frame = planning.summary(run)
        for variant in planning.variant_order(run):
            cells = [planning.median_cell(planning.cell(frame, QUERY, variant, w)) for w in wins]
            rows.append([place(run), planning.label(run, variant), *cells])
    return table(["data on", "variant", *wins], rows)


def claims_table(results: Path) -> str:
    """The study's planning claims at each place: Parquet's growth with the window, as ingested
    against 8 MB, and 8 MB against Parquet, at the run's narrow and wide windows."""
    runs = planning_runs(results)
    rows = []
    for run in runs:
        frame = planning.summary(run)
        wide, narrow = planning.wide_narrow(run)
        grown = planning.growth(run, frame)

        def med(variant: str, window: str, frame: pd.DataFrame = frame) -> float:
            return planning.median(frame, QUERY, variant, window)

        rows.append(
            [
                place(run),
                ratio(grown.loc[(QUERY, PARQUET), "planning_ratio"], None),
                ratio(grown.loc[(QUERY, EIGHT_MB), "planning_ratio"], None),
                *(ratio(med(AS_INGESTED, w) / med(EIGHT_MB, w), None) for w in (narrow, wide)),
                *(ratio(eight_over_parquet(frame, w), None) for w in (narrow, wide)),
            ]
        )
    wide, narrow = planning.wide_narrow(runs[0])
    header = [
        "data on",
        f"Parquet {wide} / {narrow}",
        f"8 MB {wide} / {narrow}",
        f"as ingested / 8 MB, {narrow}",
        f"as ingested / 8 MB, {wide}",
        f"8 MB / Parquet, {narrow}",
        f"8 MB / Parquet, {wide}",
    ]
    return table(header, rows)


def eight_over_parquet(frame: pd.DataFrame, window: str) -> float:
    """The 8 MB table's median planning of `QUERY` over Parquet's at one window."""
    return planning.median(frame, QUERY, EIGHT_MB, window) / planning.median(frame, QUERY, PARQUET, window)


def planning_note(results: Path) -> str:
    """For docs/planning.md, beside its claim that Iceberg plans faster than Parquet only for wide
    windows: what the same claim measured at each place (the 8 MB table over Parquet at the narrow
    and wide windows, and Parquet's growth), from the runs of `planning_runs`."""
    runs = planning_runs(results)
    wide, narrow = planning.wide_narrow(runs[0])
    places = []
    for run in runs:
        frame = planning.summary(run)
        places.append(
            {
                "where": where(run),
                "latency": latency(run) if storage(run).get("kind") == "object" else None,
                "narrow": eight_over_parquet(frame, narrow),
                "wide": eight_over_parquet(frame, wide),
                "parquet_growth": planning.growth(run, frame).loc[(QUERY, PARQUET), "planning_ratio"],
            }
        )
    store = sorted((p for p in places if p["latency"] is not None), key=lambda p: p["latency"])
    return render(
        "store_page/planning_note.md.j2",
        query=QUERY,
        local=runs[0].run_id,
        narrow=narrow,
        wide=wide,
        places=places,
        widens=len(store) > 1 and store[-1]["narrow"] > store[0]["narrow"],
        slowest=store[-1],
        fastest=store[0],
        sent={v: sum(_requests(runs[-1], v, narrow).values()) for v in (EIGHT_MB, PARQUET)},
        eight=EIGHT_MB,
        parquet=PARQUET,
    )


def requests_table(results: Path) -> str:
    """Median S3 requests per plan (LIST, HEAD, GET) of each variant at the narrow and wide
    windows, per object-store run, with the delay proxy's own tally where there was one."""
    runs = planning_runs(results)[1:]
    wide, narrow = planning.wide_narrow(runs[0])
    rows = []
    for run in runs:
        for variant in planning.variant_order(run):
            cells = []
            for window in (narrow, wide):
                counts = _requests(run, variant, window)
                cells.append(" / ".join(num(counts[k]) for k in REQUESTS))
            rows.append([place(run), planning.label(run, variant), *cells])
    proxied = [
        {
            "place": place(r),
            "tally": r.meta()["proxy_requests"],
            "total": sum(v for v in r.meta()["proxy_requests"].values() if isinstance(v, int | float)),
        }
        for r in runs
        if r.meta().get("proxy_requests")
    ]
    head = " / ".join(REQUESTS)
    rows = table(["data on", "variant", f"{narrow}: {head}", f"{wide}: {head}"], rows)
    return render("store_page/requests.md.j2", table=rows, proxied=proxied)


def _crossover(run: Run, frame: pd.DataFrame) -> str | None:
    """The narrowest window from which on the 8 MB table plans faster than Parquet, or None."""
    wins = planning.windows(run)
    faster = [
        planning.median(frame, QUERY, EIGHT_MB, w) < planning.median(frame, QUERY, PARQUET, w) for w in wins
    ]
    for i, window in enumerate(wins):
        if all(faster[i:]):
            return window
    return None


def where(run: Run) -> str:
    """`on local disk`, `on RGW at 0 ms`, `on RGW with 20 ms added (proxy)`: `place` in a sentence."""
    s = storage(run)
    if s.get("kind") != "object":
        return "on local disk"
    server, _, _ = place(run).partition(",")
    ms = latency(run)
    return (
        f"on {server} at 0 ms"
        if ms == 0
        else f"on {server} with {ms:g} ms added ({s.get('latency_mechanism')})"
    )


def reading(results: Path) -> str:
    """What the requests explain, in sentences computed from the runs: Parquet's LISTs and its
    growth, the manifests Iceberg fetches and what each added round trip costs, and from which
    window the 8 MB table plans faster than Parquet at each place."""
    runs = planning_runs(results)
    wide, narrow = planning.wide_narrow(runs[0])
    frames = {r.run_id: planning.summary(r) for r in runs}

    def med(run: Run, variant: str, window: str) -> float:
        return planning.median(frames[run.run_id], QUERY, variant, window)

    first = runs[1]

    def sent(variant: str) -> dict[str, dict[str, float]]:
        return {"narrow": _requests(first, variant, narrow), "wide": _requests(first, variant, wide)}

    parquet = sent(PARQUET)
    rows = {w: planning.cell(frames[first.run_id], QUERY, PARQUET, w) for w in (narrow, wide)}
    zero = next((r for r in runs[1:] if latency(r) == 0), None)
    slower = [
        {
            "where": where(run)[0].upper() + where(run)[1:],
            "latency": latency(run),
            "cases": [
                added_time(run, variant, window, med(run, variant, window) - med(zero, variant, window))
                for variant, window in ((PARQUET, wide), (AS_INGESTED, narrow))
            ],
        }
        for run in runs[1:]
        if zero is not None and latency(run) != 0
    ]
    return render(
        "store_page/reading.md.j2",
        narrow=narrow,
        wide=wide,
        first=where(first),
        parquet=parquet,
        per_day=all(
            parquet[k]["LIST"] == max(1.0, float(rows[w]["window_hours"]) / 24)
            for k, w in (("narrow", narrow), ("wide", wide))
        ),
        runs=[
            {
                "where": where(r),
                "parquet_growth": med(r, PARQUET, wide) / med(r, PARQUET, narrow),
                "ingested_ms": [med(r, AS_INGESTED, w) for w in planning.windows(r)],
                "crossover": _crossover(r, frames[r.run_id]),
            }
            for r in runs
        ],
        reads_all=all(planning.reads_all(frames[r.run_id], QUERY, AS_INGESTED) for r in runs),
        manifests=int(planning.cell(frames[first.run_id], QUERY, AS_INGESTED, narrow)["manifests_total"]),
        ingested=sent(AS_INGESTED),
        eight=sent(EIGHT_MB),
        slower=slower,
        zero=zero and where(zero),
    )


def added_time(run: Run, variant: str, window: str, added: float) -> dict[str, object]:
    """What a latency added to one plan: `added` ms over the requests the plan sent, and whether
    that is less per request than each round trip was delayed (`overlap`: the requests were in
    flight together, so the quotient is wall time per request, not a request's latency)."""
    sent = sum(_requests(run, variant, window).values())
    return {
        "variant": planning.plain(run, variant),
        "window": window,
        "added": added,
        "sent": sent,
        "overlap": added / sent < latency(run),
    }


def canonical_table(results: Path) -> str:
    """Iceberg / Parquet geometric means over the canonical queries (planning, execution, total)
    for the initial and optimized setups, local disk beside the object store."""
    local = canonical.load(results)
    remote = object_runs(results, "canonical")
    if not remote:
        raise LookupError(f"no complete canonical run under {results / 'reference' / OBJECT_STORE}")
    store = canonical.of_run(remote[-1])
    rows = []
    for c in (local, store):
        for variant in (c.initial, c.optimized):
            intervals = [canonical.interval(c.versus_ci, variant, part) for part in stats.PARTS]
            cells = [
                num(c.geomean(variant, part), 2) + "x" + ci
                for part, ci in zip(stats.PARTS, intervals, strict=True)
            ]
            how = measured_as(c.meta["protocol"], interval=all(intervals))
            rows.append([place(c.run), f"`{canonical.setup(variant)}`", *cells, how])
    return render(
        "store_page/canonical.md.j2",
        geomeans=table(["data on", "setup", "planning", "execution", "total", "measured"], rows),
        protocols=[{"where": where(c.run), "p": c.meta["protocol"]} for c in (local, store)],
        study_initial=canonical.STUDY_INITIAL,
        totals=[{"ratio": c.geomean(c.initial, "total_ms"), "where": where(c.run)} for c in (local, store)],
        store=where(remote[-1]),
        per_file=per_file(remote[-1]),
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


def per_file(run: Run) -> str:
    """The table of what a file read costs each variant on the store: the measured executions' files, and
    their S3 requests (S3A's counters) and execution time per file read, summed over the queries."""
    m = measured(run)
    done = m[m["executed"].astype(bool)]
    columns = ["files_scanned", "execution_ms", *REQUESTS.values()]
    sums = done.groupby("variant", sort=False)[columns].sum()
    rows = []
    for variant, r in sums.iterrows():
        files = r["files_scanned"]
        rows.append(
            [
                f"`{variant}`",
                num(files),
                *(num(r[c] / files, 2) for c in REQUESTS.values()),
                num(r["execution_ms"] / files, 2),
            ]
        )
    return table(
        ["variant", "files read", *(f"{k} per file" for k in REQUESTS), "execution ms per file"], rows
    )


BLOCKS: dict[str, Callable[[Path], str]] = {
    "object-store-runs": runs_paragraph,
    "object-store-planning": planning_table,
    "object-store-claims": claims_table,
    "object-store-requests": requests_table,
    "object-store-reading": reading,
    "object-store-canonical": canonical_table,
    "planning-on-store": planning_note,
}
