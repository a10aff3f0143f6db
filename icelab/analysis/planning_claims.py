"""The figures behind docs/planning.md's claims section, each verdict checked against them.

The verdicts stay typed in the page's template; every function here requires what its verdict
says of the reference planning runs (`require`), so a result that no longer supports one stops
`icelab docs` rather than print the verdict beside numbers that contradict it.
"""

from __future__ import annotations

from icelab.analysis.claims import require
from icelab.analysis.planning_cases import (
    AS_INGESTED,
    NESTED,
    PARQUET,
    PUSHDOWN,
    QUERY,
    STUDY_TARGET,
    aligned,
    cell,
    days_per_manifest,
    growth,
    median,
    profile,
    reads_all,
    short,
    summary,
    table_state,
    variant_order,
    wide_narrow,
    windows,
)
from icelab.core.runs import Run


def claims(eight: Run, sweep: Run, health: dict[str, dict]) -> dict[str, object]:
    """Every claim's figures, by claim (`health`: the manifest_health report by table state)."""
    wide, narrow = wide_narrow(sweep)
    return {
        "query": QUERY,
        "nested": NESTED,
        "wide": wide,
        "narrow": narrow,
        "parquet_linear": parquet_linear(eight, sweep),
        "iceberg_constant": iceberg_constant(sweep),
        "larger": larger_manifests(sweep, health),
        "iceberg_faster": iceberg_faster(sweep),
        "two_clocks": two_clocks(sweep),
    }


def parquet_linear(eight: Run, sweep: Run) -> dict[str, object]:
    """Parquet planning grows about linearly with the window, on both sides of parallel listing."""
    frame = summary(eight)
    wide, narrow = wide_narrow(eight)
    grown, g_sweep = growth(eight, frame), growth(sweep, summary(sweep))
    rows = [cell(frame, QUERY, PARQUET, w) for w in windows(eight)]
    points = sorted((float(r["partitions_scanned"]), float(r["planning_ms_median"])) for r in rows)
    threshold = int(
        eight.config()["engine"]["conf"]["spark.sql.sources.parallelPartitionDiscovery.threshold"]
    )
    below = [p for p in points if 1 < p[0] <= threshold]
    above = [p for p in points if p[0] > threshold]
    require(len(below) >= 2 and len(above) >= 2, "windows on both sides of the parallel-listing threshold")

    def slope(pts: list[tuple[float, float]]) -> dict[str, float]:
        (x0, y0), (x1, y1) = pts[0], pts[-1]
        return {"slope": (y1 - y0) / (x1 - x0), "first": x0, "last": x1}

    require(
        abs(slope(above)["slope"] / slope(below)["slope"] - 1) < 0.25,
        "parallel listing changes the slope little",
    )
    ratios = {q: grown.loc[(q, PARQUET), "planning_ratio"] for q in eight.config()["experiment"]["queries"]}
    require(min(ratios.values()) > 10, "Parquet planning grows with the window")

    def at(window: str) -> dict[str, object]:
        row = cell(frame, QUERY, PARQUET, window)
        return {
            "window": window,
            "ms": row["planning_ms_median"],
            "partitions": row["partitions_scanned"],
            "files": row["files_scanned"],
        }

    return {
        "narrow": at(narrow),
        "wide": at(wide),
        "growth": ratios[QUERY],
        "nested_growth": ratios[NESTED],
        "sweep_growth": g_sweep.loc[(QUERY, PARQUET), "planning_ratio"],
        "sweep_nested_growth": g_sweep.loc[(NESTED, PARQUET), "planning_ratio"],
        "threshold": threshold,
        "below": slope(below),
        "above": slope(above),
    }


def iceberg_constant(sweep: Run) -> dict[str, object]:
    """Iceberg planning on manifests aligned with the partitions: cheap narrow, below Parquet wide."""
    frame, (wide, narrow) = summary(sweep), wide_narrow(sweep)
    grown = growth(sweep, frame)
    good = aligned(sweep)
    require(bool(good), "some rewritten profile is aligned with the partitions")
    growths = [grown.loc[(QUERY, v), "planning_ratio"] for v in good]
    flat = [v for v in variant_order(sweep) if v != PARQUET and reads_all(frame, QUERY, v)]
    narrow_ms = [median(frame, QUERY, v, narrow) for v in good]
    wide_ms = [median(frame, QUERY, v, wide) for v in good]
    parquet_wide = median(frame, QUERY, PARQUET, wide)
    ingested_narrow = median(frame, QUERY, AS_INGESTED, narrow)
    require(min(growths) > 2, "Iceberg planning grows with the window on aligned manifests")
    require(max(narrow_ms) < ingested_narrow, "aligned manifests make narrow windows cheap")
    require(max(wide_ms) < parquet_wide, "aligned manifests keep the widest window below Parquet")
    # Iceberg's clock per MB of manifests, at the narrowest window that reads all of them.
    per_mb = []
    for v in [v for v in variant_order(sweep) if v != PARQUET and v != PUSHDOWN]:
        full = [
            w
            for w in windows(sweep)
            if cell(frame, QUERY, v, w)["manifests_scanned"] == cell(frame, QUERY, v, w)["manifests_total"]
        ]
        if full:
            ms = median(frame, QUERY, v, full[0], "iceberg_planning_ms")
            mb = table_state(sweep, v)["manifest_bytes"] / 1e6
            per_mb.append({"name": short(v), "ms": ms / mb, "window": full[0]})
    return {
        "aligned": [profile(v) for v in good],
        "days": [days_per_manifest(sweep, v) for v in good],
        "growth": growths,
        "flat": [short(v) for v in flat],
        "flat_ms": [median(frame, QUERY, v, w) for v in flat for w in windows(sweep)],
        "narrow_ms": narrow_ms,
        "wide_ms": wide_ms,
        "ingested_narrow": ingested_narrow,
        "parquet_wide": parquet_wide,
        "per_mb": per_mb,
    }


def larger_manifests(sweep: Run, health: dict[str, dict]) -> dict[str, object]:
    """Larger manifests plan faster only while they stay aligned: 8 MB beats as ingested, one does not."""
    frame, (_, narrow) = summary(sweep), wide_narrow(sweep)
    largest = min(
        (v for v in variant_order(sweep) if profile(v).startswith("rewrite_")),
        key=lambda v: table_state(sweep, v)["manifests"],
    )
    ms = {v: median(frame, QUERY, v, narrow) for v in (AS_INGESTED, STUDY_TARGET, largest)}
    require(ms[STUDY_TARGET] < ms[AS_INGESTED], "8 MB manifests plan faster than the as-ingested ones")
    require(ms[largest] > ms[STUDY_TARGET], "one manifest for everything plans slower than 8 MB ones")
    span = health[profile(AS_INGESTED)]
    return {
        "ingested": table_state(sweep, AS_INGESTED)["manifests"],
        "span": {**span["stats"]["span"], "days": span["day_partitions"]},
        "target": profile(STUDY_TARGET),
        "target_manifests": table_state(sweep, STUDY_TARGET)["manifests"],
        "target_days": days_per_manifest(sweep, STUDY_TARGET),
        "ingested_ms": ms[AS_INGESTED],
        "target_ms": ms[STUDY_TARGET],
        "largest": profile(largest),
        "largest_manifests": table_state(sweep, largest)["manifests"],
        "largest_ms": ms[largest],
    }


def iceberg_faster(sweep: Run) -> dict[str, object]:
    """Iceberg plans faster than Parquet for wide windows; narrow ones only on aligned layouts."""
    frame, wins, (wide, narrow) = summary(sweep), windows(sweep), wide_narrow(sweep)
    parquet = median(frame, QUERY, PARQUET, narrow)
    iceberg = [v for v in variant_order(sweep) if v != PARQUET]
    faster = [v for v in iceberg if median(frame, QUERY, v, narrow) < parquet]
    require(
        set(faster) <= set(aligned(sweep)), "only aligned layouts plan a narrow window faster than Parquet"
    )
    require(
        all(median(frame, QUERY, v, wide) < median(frame, QUERY, PARQUET, wide) for v in iceberg),
        "every Iceberg layout plans the widest window faster than Parquet",
    )
    files = cell(frame, QUERY, PARQUET, narrow)

    def crossover(variant: str, layout: str) -> dict[str, object]:
        behind = [median(frame, QUERY, PARQUET, w) > median(frame, QUERY, variant, w) for w in wins]
        first = behind.index(True)
        require(all(behind[first:]), f"Parquet stays behind {variant} once behind")
        return {"before": wins[first - 1] if first else None, "at": wins[first], "layout": layout}

    return {
        "parquet_ms": parquet,
        "faster": [profile(v) for v in faster],
        "faster_ms": [median(frame, QUERY, v, narrow) for v in faster],
        "partitions": files["partitions_scanned"],
        "files": files["files_scanned"],
        "crossovers": [
            crossover(STUDY_TARGET, f"`{profile(STUDY_TARGET)}`"),
            crossover(AS_INGESTED, "the as-ingested layout"),
        ],
    }


def two_clocks(sweep: Run) -> dict[str, object]:
    """The harness's planning clock is Iceberg's plus Spark's part, so its growth ratio is smaller."""
    frame, (wide, narrow) = summary(sweep), wide_narrow(sweep)
    grown = growth(sweep, frame)
    iceberg = frame[(frame["query_id"] == QUERY) & (frame["format"] == "iceberg")]
    gaps = iceberg["planning_ms_median"] - iceberg["iceberg_planning_ms_median"]
    require(bool((gaps > 0).all()), "the harness's planning is above Iceberg's own clock")
    finest = max(aligned(sweep), key=lambda v: table_state(sweep, v)["manifests"])
    g = grown.loc[(QUERY, finest)]
    require(g["planning_ratio"] < g["iceberg_planning_ratio"], "the harness's ratio is below Iceberg's own")
    return {
        "gaps": gaps,
        "growth": g["planning_ratio"],
        "profile": profile(finest),
        "iceberg_growth": g["iceberg_planning_ratio"],
        "narrow_ms": g[f"iceberg_planning_ms_median_{narrow}"],
        "wide_ms": g[f"iceberg_planning_ms_median_{wide}"],
    }
