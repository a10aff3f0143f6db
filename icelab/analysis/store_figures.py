"""The figures of docs/object-store.md: the study's planning claims on local disk and on an S3
store at each latency measured (the runs of `store_runs.planning_runs`, local disk first), and the
S3 requests behind them (S3A's counters in measurements.parquet). Medians and growth ratios come
from `icelab.analysis.planning_cases`, as the experiments compute them.
"""

from __future__ import annotations

import pandas as pd

from icelab.analysis.planning_cases import (
    AS_INGESTED,
    PARQUET,
    QUERY,
    STUDY_TARGET,
    cell,
    growth,
    label,
    median,
    plain,
    planning_median,
    reads_all,
    summary,
    variant_order,
    wide_narrow,
    windows,
)
from icelab.analysis.store_runs import latency, on_store, place, where
from icelab.analysis.stored_run import stored
from icelab.core.runs import Run

EIGHT_MB = STUDY_TARGET
REQUESTS = {"LIST": "s3_list_requests", "HEAD": "s3_head_requests", "GET": "s3_get_requests"}


def requests(run: Run, variant: str, window: str) -> dict[str, float]:
    """Median S3 requests per measured plan of `QUERY` at one (variant, window), by kind."""
    m = stored(run).counted()
    rows = m[
        (m["query_id"] == QUERY)
        & (m["variant"] == variant)
        & (m["window"] == window)
        & (~m["executed"].astype(bool))
    ]
    return {kind: float(rows[column].median()) for kind, column in REQUESTS.items()}


def eight_over_parquet(frame: pd.DataFrame, window: str) -> float:
    """The 8 MB table's median planning of `QUERY` over Parquet's at one window."""
    return median(frame, QUERY, EIGHT_MB, window) / median(frame, QUERY, PARQUET, window)


def planning(runs: list[Run]) -> dict[str, object]:
    """Median planning of `QUERY` per window, one row per (place, variant)."""
    rows = []
    for run in runs:
        frame = summary(run)
        for variant in variant_order(run):
            cells = [planning_median(cell(frame, QUERY, variant, w)) for w in windows(run)]
            rows.append({"place": place(run), "label": label(run, variant), "cells": cells})
    return {"windows": windows(runs[0]), "rows": rows}


def claims(runs: list[Run]) -> dict[str, object]:
    """The study's planning claims at each place: Parquet's and the 8 MB table's growth with the
    window, as ingested over 8 MB, and 8 MB over Parquet, at the narrow and the wide window."""
    rows = []
    for run in runs:
        frame, (wide, narrow) = summary(run), wide_narrow(run)
        grown = growth(run, frame)
        rows.append(
            {
                "place": place(run),
                "parquet_growth": grown.loc[(QUERY, PARQUET), "planning_ratio"],
                "eight_growth": grown.loc[(QUERY, EIGHT_MB), "planning_ratio"],
                "ingested_over_eight": [
                    median(frame, QUERY, AS_INGESTED, w) / median(frame, QUERY, EIGHT_MB, w)
                    for w in (narrow, wide)
                ],
                "eight_over_parquet": [eight_over_parquet(frame, w) for w in (narrow, wide)],
            }
        )
    wide, narrow = wide_narrow(runs[0])
    return {"wide": wide, "narrow": narrow, "rows": rows}


def planning_note(runs: list[Run]) -> dict[str, object]:
    """For docs/planning.md: the 8 MB table over Parquet at the narrow and the wide window and
    Parquet's growth at each place, and whether the added latency widens the narrow-window gap."""
    wide, narrow = wide_narrow(runs[0])
    places = []
    for run in runs:
        frame = summary(run)
        places.append(
            {
                "where": where(run),
                "latency": latency(run) if on_store(run) else None,
                "narrow": eight_over_parquet(frame, narrow),
                "wide": eight_over_parquet(frame, wide),
                "parquet_growth": growth(run, frame).loc[(QUERY, PARQUET), "planning_ratio"],
            }
        )
    store = sorted((p for p in places if p["latency"] is not None), key=lambda p: p["latency"])
    return {
        "query": QUERY,
        "local": runs[0].run_id,
        "narrow": narrow,
        "wide": wide,
        "places": places,
        "widens": len(store) > 1 and store[-1]["narrow"] > store[0]["narrow"],
        "slowest": store[-1],
        "fastest": store[0],
        "sent": {v: sum(requests(runs[-1], v, narrow).values()) for v in (EIGHT_MB, PARQUET)},
        "eight": EIGHT_MB,
        "parquet": PARQUET,
    }


def request_counts(runs: list[Run]) -> dict[str, object]:
    """Median S3 requests per plan of each variant at the narrow and wide windows, per object-store
    run, with the delay proxy's own tally (run.json `proxy_requests`) where there was one."""
    wide, narrow = wide_narrow(runs[0])
    rows = [
        {
            "place": place(run),
            "label": label(run, variant),
            "cells": [requests(run, variant, w) for w in (narrow, wide)],
        }
        for run in runs
        for variant in variant_order(run)
    ]
    proxied = [
        {
            "place": place(r),
            "tally": r.meta()["proxy_requests"],
            "total": sum(v for v in r.meta()["proxy_requests"].values() if isinstance(v, int | float)),
        }
        for r in runs
        if r.meta().get("proxy_requests")
    ]
    return {"wide": wide, "narrow": narrow, "kinds": list(REQUESTS), "rows": rows, "proxied": proxied}


def crossover(run: Run, frame: pd.DataFrame) -> str | None:
    """The narrowest window from which on the 8 MB table plans faster than Parquet, or None."""
    wins = windows(run)
    faster = [median(frame, QUERY, EIGHT_MB, w) < median(frame, QUERY, PARQUET, w) for w in wins]
    return next((window for i, window in enumerate(wins) if all(faster[i:])), None)


def reading(runs: list[Run]) -> dict[str, object]:
    """What the requests explain: Parquet's LISTs and its growth, the manifests Iceberg fetches and
    what each added round trip costs, and from which window the 8 MB table plans faster than
    Parquet at each place (`runs`: local disk, then the store's runs)."""
    wide, narrow = wide_narrow(runs[0])
    frames = {r.run_id: summary(r) for r in runs}

    def med(run: Run, variant: str, window: str) -> float:
        return median(frames[run.run_id], QUERY, variant, window)

    first = runs[1]

    def sent(variant: str) -> dict[str, dict[str, float]]:
        return {"narrow": requests(first, variant, narrow), "wide": requests(first, variant, wide)}

    parquet = sent(PARQUET)
    rows = {w: cell(frames[first.run_id], QUERY, PARQUET, w) for w in (narrow, wide)}
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
    return {
        "narrow": narrow,
        "wide": wide,
        "first": where(first),
        "parquet": parquet,
        "per_day": all(
            parquet[k]["LIST"] == max(1.0, float(rows[w]["window_hours"]) / 24)
            for k, w in (("narrow", narrow), ("wide", wide))
        ),
        "runs": [
            {
                "where": where(r),
                "parquet_growth": med(r, PARQUET, wide) / med(r, PARQUET, narrow),
                "ingested_ms": [med(r, AS_INGESTED, w) for w in windows(r)],
                "crossover": crossover(r, frames[r.run_id]),
            }
            for r in runs
        ],
        "reads_all": all(reads_all(frames[r.run_id], QUERY, AS_INGESTED) for r in runs),
        "manifests": int(cell(frames[first.run_id], QUERY, AS_INGESTED, narrow)["manifests_total"]),
        "ingested": sent(AS_INGESTED),
        "eight": sent(EIGHT_MB),
        "slower": slower,
        "zero": zero and where(zero),
    }


def added_time(run: Run, variant: str, window: str, added: float) -> dict[str, object]:
    """What a latency added to one plan: `added` ms over the requests the plan sent, and whether
    that is less per request than each round trip was delayed (`overlap`: the requests were in
    flight together, so the quotient is wall time per request, not a request's latency)."""
    sent = sum(requests(run, variant, window).values())
    return {
        "variant": plain(run, variant),
        "window": window,
        "added": added,
        "sent": sent,
        "overlap": added / sent < latency(run),
    }


def per_file(run: Run) -> list[dict[str, object]]:
    """What a file read costs each variant on the store: the measured executions' files, and their
    S3 requests (S3A's counters) and execution time per file read, summed over the queries."""
    m = stored(run).counted()
    done = m[m["executed"].astype(bool)]
    columns = ["files_scanned", "execution_ms", *REQUESTS.values()]
    sums = done.groupby("variant", sort=False)[columns].sum()
    return [
        {
            "variant": variant,
            "files": r["files_scanned"],
            "requests": [r[c] / r["files_scanned"] for c in REQUESTS.values()],
            "execution_ms": r["execution_ms"] / r["files_scanned"],
        }
        for variant, r in sums.iterrows()
    ]
