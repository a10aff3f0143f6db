"""The generated blocks of docs/planning.md and docs/protocol.md: the planning runs' figures.

Every figure comes from the reference runs of `manifest_8mb` and `manifest_sweep` (and, for how
the as-ingested manifests span the days, `manifest_health`): medians, IQRs and growth ratios
through `icelab.analysis.stats` from `measurements.parquet`, as the experiments compute them; table
states and durations from `run.json`; protocol, windows and Spark settings from `config.yaml`;
commit and machine from `env.json`. The verdicts of the claims section stay typed, but each is
checked against the data here: a result that no longer supports a verdict stops `icelab docs`
(`ClaimError`) rather than print the verdict beside numbers that contradict it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from icelab.analysis import stats
from icelab.analysis.effect_intervals import MIN_VALUES
from icelab.analysis.stored_run import stored
from icelab.bench.answers import verdict
from icelab.core.runs import Run
from icelab.core.units import days, num, pct, ratio, size
from icelab.tools.docs.markdown import render, table
from icelab.tools.docs.sources import provenance, reference_run, run_minutes

# A median whose IQR exceeds this share of it shows that share beside it in the tables.
WIDE_IQR = 0.10
# Manifests "aligned with the partitions": at most this many day partitions each, on average.
ALIGNED_DAYS = 4
QUERY = "count_window"  # the query the tables and the claims are about
NESTED = "nested_filter_window"
HIDDEN = "count_window_hidden"
PARQUET = "parquet"
AS_INGESTED = "iceberg/as_ingested"
PUSHDOWN = "iceberg/aggregate_pushdown"
STUDY_TARGET = "iceberg/rewrite_8mb"  # the study's 8 MB manifests


class ClaimError(ValueError):
    """A typed verdict of docs/planning.md that the reference results no longer support."""


def require(condition: bool, claim: str) -> None:
    """Raise `ClaimError` naming `claim` when the results contradict it."""
    if not condition:
        raise ClaimError(f"docs/planning.md: the reference results no longer support: {claim}")


# --- reading a run -------------------------------------------------------------------------------


def summary(run: Run) -> pd.DataFrame:
    """The run's per-case medians and IQRs, as the experiment computes them (`stats.summarize`)."""
    return stored(run).summary(run.config()["protocol"]["unstable_iqr"])


def windows(run: Run) -> list[str]:
    """The run's windows, in its config's order (narrowest first)."""
    return list(run.config()["experiment"]["windows"])


def wide_narrow(run: Run) -> tuple[str, str]:
    """The windows of the run's growth ratio (`experiment.ratio`): wide, narrow."""
    wide, narrow = run.config()["experiment"]["ratio"]
    return wide, narrow


def variant_order(run: Run) -> list[str]:
    """The run's variants, in run.json's order."""
    return list(run.meta()["variants"])


def table_state(run: Run, variant: str) -> dict:
    """run.json's record of a variant's table: name, manifests, manifest bytes, Spark settings."""
    return run.meta()["variants"][variant]


def cell(frame: pd.DataFrame, query: str, variant: str, window: str) -> pd.Series:
    """The one summary row of (query, variant, window)."""
    rows = frame[(frame["query_id"] == query) & (frame["variant"] == variant) & (frame["window"] == window)]
    if len(rows) != 1:
        raise LookupError(f"{len(rows)} summary rows for {query} {variant} {window}")
    return rows.iloc[0]


def median(frame: pd.DataFrame, query: str, variant: str, window: str, timing: str = "planning_ms") -> float:
    """The median of one timing of one case."""
    return float(cell(frame, query, variant, window)[f"{timing}_median"])


def values(run: Run, query: str, variant: str, window: str, timing: str = "planning_ms") -> list[float]:
    """The measured values behind one case's median (the rows that count), smallest first: what a
    page prints beside a median of too few values for a spread."""
    m = stored(run).counted()
    rows = m[(m["query_id"] == query) & (m["variant"] == variant) & (m["window"] == window)]
    return sorted(rows[timing].dropna().astype(float))


def growth(run: Run, frame: pd.DataFrame) -> pd.DataFrame:
    """`stats.growth` over the run's ratio windows, indexed by (query, variant)."""
    return stats.growth(frame, *wide_narrow(run)).set_index(["query_id", "variant"])


def wide_iqr(row: pd.Series, timing: str = "planning_ms") -> float | None:
    """The IQR as a share of the median when it exceeds `WIDE_IQR`, else None."""
    share = row[f"{timing}_iqr"] / row[f"{timing}_median"]
    return float(share) if share > WIDE_IQR else None


def median_cell(row: pd.Series) -> str:
    """`1,354`, or `400 (30%)` when the IQR exceeds `WIDE_IQR` of the median."""
    share = wide_iqr(row)
    return num(row["planning_ms_median"]) + ("" if share is None else f" ({pct(share)})")


def machine(run: Run) -> str:
    """`2 cores, 23.5 GiB` from env.json."""
    m = run.env().get("machine") or {}
    return f"{m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB"


def rounds(run: Run) -> str:
    """`5 measured rounds after 1 warm-up, 2 of them executed`, from config.yaml."""
    p = run.config()["protocol"]
    warm = f"{p['warmups']} warm-up" + ("" if p["warmups"] == 1 else "s")
    return f"{p['repetitions']} measured rounds after {warm}, {p['executions']} of them executed"


def profile(variant: str) -> str:
    """`rewrite_8mb` of `iceberg/rewrite_8mb`."""
    return variant.split("/", 1)[1] if "/" in variant else variant


def label(run: Run, variant: str) -> str:
    """`parquet`, `iceberg as ingested`, `iceberg rewritten at 8MB`, else the profile's name."""
    if variant == PARQUET:
        return "parquet"
    if variant == AS_INGESTED:
        return "iceberg as ingested"
    target = ((run.meta().get("profiles") or {}).get(profile(variant)) or {}).get("manifest_target_size")
    return f"iceberg rewritten at {target}" if target else f"iceberg `{profile(variant)}`"


def plain(run: Run, variant: str) -> str:
    """`Parquet`, `as ingested`, `rewritten at 8MB`: a variant inside a sentence."""
    if variant == PARQUET:
        return "Parquet"
    return label(run, variant).removeprefix("iceberg ")


def short(variant: str) -> str:
    """`Parquet`, `as ingested`, or the profile's name in backticks."""
    if variant == PARQUET:
        return "Parquet"
    return "as ingested" if variant == AS_INGESTED else f"`{profile(variant)}`"


def days_per_manifest(run: Run, variant: str) -> float:
    """The dataset's day partitions over the variant's manifests."""
    return run.config()["dataset"]["span_days"] / table_state(run, variant)["manifests"]


def aligned(run: Run) -> list[str]:
    """Rewritten variants whose manifests hold at most `ALIGNED_DAYS` day partitions each, on average."""
    return [
        v
        for v in variant_order(run)
        if profile(v).startswith("rewrite_") and days_per_manifest(run, v) <= ALIGNED_DAYS
    ]


def reads_all(frame: pd.DataFrame, query: str, variant: str) -> bool:
    """Every window of `query` scans every manifest of `variant`."""
    part = frame[(frame["query_id"] == query) & (frame["variant"] == variant)]
    return bool((part["manifests_scanned"] == part["manifests_total"]).all())


def health_report(results: Path) -> dict[str, dict]:
    """The manifest_health reference run's report.json, by table state."""
    path = reference_run(results, "manifest_health").path / "report.json"
    return {state["state"]: state for state in json.loads(path.read_text())}


def commit_of(run: Run) -> tuple[str, bool]:
    """(short commit, dirty) from env.json."""
    git = run.env().get("git") or {}
    return (git.get("commit") or "unknown")[:7], bool(git.get("dirty"))


# --- docs/planning.md ----------------------------------------------------------------------------


def profiles_table(results: Path) -> str:
    """The table states: manifests and their bytes per profile (the sweep's run.json)."""
    run = reference_run(results, "manifest_sweep")
    health = health_report(results)
    config = run.config()["dataset"]
    rows = []
    for variant in variant_order(run):
        if variant == PARQUET:
            continue
        state, name = table_state(run, variant), profile(variant)
        manifests = f"{state['manifests']} ({size(state['manifest_bytes'])})"
        if variant == AS_INGESTED:
            if state["manifests"] == config["commits"]:
                manifests += ", one per commit"
            span, partitions = health[name]["stats"]["span"], health[name]["day_partitions"]
            spans = (
                f"each spans all {partitions} days"
                if span["min"] == 1.0
                else f"median span {pct(span['median'])}"
            )
        elif name.startswith("rewrite_"):
            spans = days(days_per_manifest(run, variant)).removesuffix(" days").removesuffix(" day")
        elif state["table"] == table_state(run, AS_INGESTED)["table"]:
            manifests += ", the as-ingested table"
            conf = ", ".join(f"`{k}`" for k in state.get("spark_conf") or {})
            spans = f"as ingested; {conf} on for its queries" if conf else "as ingested"
        else:
            spans = "-"
        note = " (the study's target)" if variant == STUDY_TARGET else ""
        rows.append([f"`{name}`{note}", manifests, spans])
    return render(
        "planning/profiles.md.j2",
        provenance=provenance(run),
        span_days=config["span_days"],
        table=table(["profile", "manifests at medium (MB)", "days per manifest"], rows),
    )


def windows_sentence(results: Path) -> str:
    """The windows both planning runs measure, from their config."""
    eight, sweep = reference_run(results, "manifest_8mb"), reference_run(results, "manifest_sweep")
    require(windows(eight) == windows(sweep), "both planning runs measure the same windows")
    return render("planning/windows.md.j2", windows=windows(eight))


def _scanned(row_narrow: pd.Series, row_wide: pd.Series) -> str:
    """What planning read at the narrow and the wide window: partitions listed, or manifests."""
    if pd.isna(row_narrow["manifests_total"]):
        return (
            f"{num(row_narrow['partitions_scanned'])}; {num(row_wide['partitions_scanned'])} partitions "
            f"listed ({num(row_narrow['files_scanned'])}; {num(row_wide['files_scanned'])} files)"
        )
    return (
        f"{num(row_narrow['manifests_scanned'])} of {num(row_narrow['manifests_total'])}; "
        f"{num(row_wide['manifests_scanned'])} of {num(row_wide['manifests_total'])} manifests"
    )


def eight_mb_table(results: Path) -> str:
    """manifest_8mb: median planning per variant and window, both queries, with growth and scans."""
    run = reference_run(results, "manifest_8mb")
    frame, wins, (wide, narrow) = summary(run), windows(run), wide_narrow(run)
    grown = growth(run, frame)
    rows = []
    for query in run.config()["experiment"]["queries"]:
        for variant in variant_order(run):
            name = f"{label(run, variant)}, `{query}`" if variant == PARQUET else label(run, variant)
            cells = [median_cell(cell(frame, query, variant, w)) for w in wins]
            scanned = _scanned(cell(frame, query, variant, narrow), cell(frame, query, variant, wide))
            rows.append(
                [name, *cells, f"**{ratio(grown.loc[(query, variant), 'planning_ratio'], None)}**", scanned]
            )
    header = ["variant", *wins, f"{wide} / {narrow}", f"scanned ({narrow}; {wide})"]
    return render(
        "planning/eight_mb.md.j2",
        machine=machine(run),
        provenance=provenance(run),
        rounds=rounds(run),
        n=int(frame["planning_ms_n"].min()),
        wide_iqr=WIDE_IQR,
        unstable_iqr=run.config()["protocol"]["unstable_iqr"],
        table=table(header, rows),
    )


def clocks(results: Path) -> str:
    """manifest_8mb: Iceberg's own planning clock beside the harness's, per window."""
    run = reference_run(results, "manifest_8mb")
    frame, wins = summary(run), windows(run)
    iceberg = [v for v in variant_order(run) if v != PARQUET]
    rows = []
    for variant in iceberg:
        rows.append(
            [
                label(run, variant),
                *(
                    f"{num(median(frame, QUERY, variant, w))} / "
                    f"{num(median(frame, QUERY, variant, w, 'iceberg_planning_ms'))}"
                    for w in wins
                ),
            ]
        )
    gaps = [
        median(frame, QUERY, v, w) - median(frame, QUERY, v, w, "iceberg_planning_ms")
        for v in iceberg
        for w in wins
    ]
    require(min(gaps) > 0, "the harness's planning is above Iceberg's own clock in every cell")
    return render("planning/clocks.md.j2", query=QUERY, table=table(["variant", *wins], rows), gaps=gaps)


def execution(results: Path) -> str:
    """manifest_8mb: the widest window's execution, and the harness's overhead (overhead.csv)."""
    run = reference_run(results, "manifest_8mb")
    frame, (wide, _) = summary(run), wide_narrow(run)
    overhead = stored(run).table("overhead.csv")
    protocol = run.config()["protocol"]
    by = overhead.groupby("variant")
    cost, base = by["overhead_ms"].median(), by["plain_ms"].median()
    variants = [
        {
            "name": plain(run, v),
            "parquet": v == PARQUET,
            "seconds": median(frame, QUERY, v, wide, "execution_ms") / 1e3,
            "each": [x / 1e3 for x in values(run, QUERY, v, wide, "execution_ms")],
            "overhead": cost[v],
            "plain_ms": base[v],
        }
        for v in variant_order(run)
    ]
    return render(
        "planning/execution.md.j2",
        wide=wide,
        query=QUERY,
        variants=variants,
        n=int(frame["execution_ms_n"].min()),
        interval_n=MIN_VALUES,
        overhead_window=protocol["overhead_window"],
        overhead_pairs=protocol["overhead_pairs"],
        pairs={"min": overhead["overhead_ms"].min(), "max": overhead["overhead_ms"].max()},
    )


def sweep_table(results: Path) -> str:
    """manifest_sweep: median planning per profile and window, growth on both clocks, manifests read."""
    run = reference_run(results, "manifest_sweep")
    frame, wins, (wide, narrow) = summary(run), windows(run), wide_narrow(run)
    grown = growth(run, frame)
    middle = wins[len(wins) // 2]
    picks = [narrow, middle, wide]
    rows = []
    for variant in variant_order(run):
        per = {w: cell(frame, QUERY, variant, w) for w in wins}
        g = grown.loc[(QUERY, variant)]
        if variant == PARQUET:
            layout = f"({num(per[wide]['partitions_scanned'])} partitions)"
            reads = " / ".join(num(per[w]["partitions_scanned"]) for w in picks) + " partitions listed"
            grow = f"**{ratio(g['planning_ratio'], None)}**"
        else:
            state = table_state(run, variant)
            layout = f"{state['manifests']} ({size(state['manifest_bytes'], label=False)})"
            reads = " / ".join(num(per[w]["manifests_scanned"]) for w in picks)
            grow = f"**{ratio(g['planning_ratio'], None)}** ({ratio(g['iceberg_planning_ratio'], None)})"
        rows.append([profile(variant), layout, *(median_cell(per[w]) for w in wins), grow, reads])
    header = [
        "variant",
        "manifests (MB)",
        *wins,
        f"{wide} / {narrow} (Iceberg clock)",
        f"manifests scanned {' / '.join(picks)}",
    ]
    return render(
        "planning/sweep.md.j2",
        provenance=provenance(run),
        minutes=run_minutes(run),
        rounds=rounds(run),
        query=QUERY,
        n=int(frame["planning_ms_n"].min()),
        wide_iqr=WIDE_IQR,
        table=table(header, rows),
    )


def sweep_notes(results: Path) -> str:
    """manifest_sweep: the nested query's growth, and the manifest counts (deterministic)."""
    run = reference_run(results, "manifest_sweep")
    frame, wins = summary(run), windows(run)
    grown = growth(run, frame)
    measured = stored(run).measurements()
    counted = measured[measured["status"] == "ok"]
    per_case = counted.groupby(["query_id", "variant", "window"], dropna=False)["manifests_scanned"]
    require(bool((per_case.nunique(dropna=False) == 1).all()), "the manifest counts are deterministic")
    iceberg = frame[frame["format"] == "iceberg"].dropna(subset=["manifests_scanned"])
    by_query = iceberg.pivot_table(
        index=["variant", "window"], columns="query_id", values="manifests_scanned", aggfunc="first"
    )
    ingested = iceberg[iceberg["variant"] == AS_INGESTED]
    return render(
        "planning/sweep_notes.md.j2",
        nested=NESTED,
        wide=wide_narrow(run)[0],
        narrow=wide_narrow(run)[1],
        growth=[
            {"name": short(v), "ratio": grown.loc[(NESTED, v), "planning_ratio"]} for v in variant_order(run)
        ],
        same=bool(by_query.nunique(axis=1).le(1).all()),
        queries=len(run.config()["experiment"]["queries"]),
        windows=wins,
        examples=[
            {
                "profile": profile(v),
                "manifests": table_state(run, v)["manifests"],
                "days": days_per_manifest(run, v),
                "counts": [cell(frame, QUERY, v, w)["manifests_scanned"] for w in wins],
            }
            for v in aligned(run)
        ],
        all_read=bool((ingested["manifests_scanned"] == ingested["manifests_total"]).all()),
        total=table_state(run, AS_INGESTED)["manifests"],
    )


def pushdown(results: Path) -> str:
    """manifest_sweep: where Iceberg's aggregate push-down answers from metadata, and what it costs."""
    run = reference_run(results, "manifest_sweep")
    frame, wins = summary(run), windows(run)

    def nodes(query: str, variant: str) -> dict[str, float]:
        return {w: float(cell(frame, query, variant, w)["scan_nodes"]) for w in wins}

    on_query = nodes(QUERY, PUSHDOWN)
    hidden = nodes(HIDDEN, PUSHDOWN)
    answered = [w for w in wins if hidden[w] == 0]
    scanned = [w for w in wins if hidden[w] != 0]
    require(all(n >= 1 for n in on_query.values()), f"push-down never applies to `{QUERY}`")
    require(bool(answered), f"push-down answers some `{HIDDEN}` window from metadata")
    require(all(w.endswith("d") for w in answered), "the windows answered from metadata are day-aligned")
    require(reads_all(frame, HIDDEN, AS_INGESTED), "the as-ingested table reads every manifest")
    fast = [median(frame, HIDDEN, PUSHDOWN, w, "execution_ms") for w in answered]
    slow = [median(frame, HIDDEN, AS_INGESTED, w, "execution_ms") for w in answered]
    planning = [median(frame, HIDDEN, PUSHDOWN, w) for w in answered]
    parquet_rows = [cell(frame, HIDDEN, PARQUET, w) for w in wins]
    parquet_ms = [float(r["planning_ms_median"]) for r in parquet_rows]
    parts = {int(r["partitions_scanned"]) for r in parquet_rows}
    require(len(parts) == 1, f"Parquet lists the same partitions for every `{HIDDEN}` window")
    return render(
        "planning/pushdown.md.j2",
        query=QUERY,
        hidden=HIDDEN,
        answered=answered,
        scanned=scanned,
        fast=fast,
        slow=slow,
        planning=planning,
        total=table_state(run, AS_INGESTED)["manifests"],
        partitions=parts.pop(),
        parquet=parquet_ms,
    )


def claims(results: Path) -> str:
    """The claims section: each typed verdict with the figures behind it, checked against them."""
    eight, sweep = reference_run(results, "manifest_8mb"), reference_run(results, "manifest_sweep")
    wide, narrow = wide_narrow(sweep)
    return render(
        "planning/claims.md.j2",
        query=QUERY,
        nested=NESTED,
        wide=wide,
        narrow=narrow,
        parquet_linear=_parquet_linear(eight, sweep),
        iceberg_constant=_iceberg_constant(sweep),
        larger=_larger_manifests(sweep, health_report(results)),
        iceberg_faster=_iceberg_faster(sweep),
        two_clocks=_two_clocks(sweep),
    )


def _parquet_linear(eight: Run, sweep: Run) -> dict[str, object]:
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


def _iceberg_constant(sweep: Run) -> dict[str, object]:
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


def _larger_manifests(sweep: Run, health: dict[str, dict]) -> dict[str, object]:
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


def _iceberg_faster(sweep: Run) -> dict[str, object]:
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


def _two_clocks(sweep: Run) -> dict[str, object]:
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


def commits(results: Path) -> str:
    """Which commit each planning run comes from, and whether its tree was clean (env.json)."""
    runs = []
    for experiment in ("manifest_8mb", "manifest_sweep"):
        run = reference_run(results, experiment)
        sha, dirty = commit_of(run)
        runs.append({"experiment": experiment, "id": run.run_id, "commit": sha, "dirty": dirty})
    return render("planning/commits.md.j2", runs=runs)


# --- docs/protocol.md ----------------------------------------------------------------------------


def protocol_medium(results: Path) -> str:
    """The reference planning run's protocol and what one wide execution costs against planning."""
    run = reference_run(results, "manifest_8mb")
    frame, (wide, _) = summary(run), wide_narrow(run)
    widest = frame[frame["window"] == wide]
    return render(
        "planning/protocol_medium.md.j2",
        provenance=provenance(run),
        machine=machine(run),
        p=run.config()["protocol"],
        wide=wide,
        files=widest["files_scanned"].max(),
        seconds=widest["execution_ms_median"] / 1e3,
        slowest=frame["planning_ms_median"].max(),
    )


def protocol_answers(results: Path) -> str:
    """The console verdict of each planning run's answer check (answers.json)."""
    runs = []
    for experiment in ("manifest_8mb", "manifest_sweep"):
        run = reference_run(results, experiment)
        checked = json.loads((run.path / "answers.json").read_text())
        runs.append({"experiment": experiment, "id": run.run_id, "verdict": verdict(checked)})
    return render("planning/protocol_answers.md.j2", runs=runs)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "planning-profiles": profiles_table,
    "planning-windows": windows_sentence,
    "planning-8mb": eight_mb_table,
    "planning-clocks": clocks,
    "planning-execution": execution,
    "planning-sweep": sweep_table,
    "planning-sweep-notes": sweep_notes,
    "planning-pushdown": pushdown,
    "planning-claims": claims,
    "planning-commits": commits,
    "protocol-medium": protocol_medium,
    "protocol-answers": protocol_answers,
}
