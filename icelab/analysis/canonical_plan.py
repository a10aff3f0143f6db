"""What a canonical run's plans show (its plan_check.csv): the leaf fields each query reads, the
plan facts per setup, nested predicate pushdown and which queries vectorized reads apply to."""

from __future__ import annotations

import pandas as pd

from icelab.analysis.canonical_run import PARQUET, Canonical, setup, short, vectorized_queries, vectorizing

# The queries that read a map column (their map cannot be pruned).
MAP_QUERIES = ("q07_map_lookup_month", "q10_identity_map_lookup_week")
# The query whose plan facts the page tabulates, and the query read by the widest projection.
PLAN_QUERY = "q05_nested_filter_projection_day"
NARROW_QUERY = "q19_narrow_projection_hour"
WIDE_QUERY = "q18_wide_projection_hour"


def _facts(row: pd.Series) -> tuple[int, int, bool | None, bool]:
    """(nested filters pushed, leaf fields read, nested pruned or None when not said, vectorized)."""
    pruned = row["nested_pruned"]
    return (
        int(row["nested_filters_pushed"]),
        int(row["read_leaves"]),
        None if pd.isna(pruned) else str(pruned) == "True",
        bool(row["vectorized"]),
    )


def plan_facts(c: Canonical) -> dict[str, object]:
    """The plan facts of q05 per variant (variants with the same facts in one group), and the plan
    facts the page quotes for q19, q18 and the map queries."""
    plan = c.plan.set_index(["query_id", "variant"])
    groups: dict[tuple[int, int, bool | None, bool], list[str]] = {}
    for variant in c.meta["variants"]:
        groups.setdefault(_facts(plan.loc[(PLAN_QUERY, variant)]), []).append(variant)
    narrow = plan.xs(NARROW_QUERY, level="query_id")
    wide = plan.xs(WIDE_QUERY, level="query_id")["read_leaves"]
    return {
        "query": short(PLAN_QUERY),
        "groups": [
            {
                "names": [variants[0], *map(setup, variants[1:])],
                "defaults": variants == [PARQUET],
                **dict(zip(("pushed", "leaves", "pruned", "vectorized"), facts, strict=True)),
            }
            for facts, variants in groups.items()
        ],
        "narrow": short(NARROW_QUERY),
        "vectorized": [setup(v) for v in c.iceberg if bool(narrow.loc[v, "vectorized"])],
        "wide": short(WIDE_QUERY),
        "wide_leaves": sorted({int(wide[v]) for v in c.iceberg}),
        "parquet_leaves": int(wide[PARQUET]),
        "whole": [
            short(mq)
            for mq in MAP_QUERIES
            if all(str(plan.loc[(mq, v), "nested_pruned"]) == "False" for v in c.meta["variants"])
        ],
    }


def nested_predicates(c: Canonical) -> dict[str, object]:
    """Nested predicate pushdown: versions from env.json, facts of q05 from plan_check.csv."""
    plan = c.plan.set_index(["query_id", "variant"]).xs(PLAN_QUERY, level="query_id")
    roles = {"initial": c.initial, "optimized": c.optimized}
    return {
        "every": bool((plan.loc[c.iceberg, "nested_filters_pushed"].astype(int) > 0).all()),
        "pushed": {role: int(plan.loc[v, "nested_filters_pushed"]) for role, v in roles.items()},
        "leaves": {role: int(plan.loc[v, "read_leaves"]) for role, v in roles.items()},
        "query": short(PLAN_QUERY),
        "initial": setup(c.initial),
        "optimized": setup(c.optimized),
        **versions_of(c),
    }


def versions_of(c: Canonical) -> dict[str, str]:
    """The run's Spark and Iceberg versions as major.minor (env.json)."""
    versions = c.run.env()["versions"]
    return {name: ".".join(versions[name].split(".")[:2]) for name in ("spark", "iceberg")}


def primitives(c: Canonical) -> dict[str, object]:
    """Which queries vectorized reads can change (plan_check.csv)."""
    return {
        "queries": len(c.windows),
        "vectorized": [short(q) for q in vectorized_queries(c)],
        "setup": setup(vectorizing(c)),
    }
