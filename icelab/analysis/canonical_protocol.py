"""How a canonical run measured: its setups, its protocol and what its rounds cost, the answers
it checked, and what the command that made it set on top of today's defaults."""

from __future__ import annotations

import json
import statistics

import pandas as pd

from icelab.analysis.canonical_run import NESTED_PRUNING, VECTORIZATION, Canonical, round_minutes, short

# The figures the study's charts show: which setup each is.
FIGURES = {"initial": "Figure 8", "optimized": "Figure 9"}


def _setup_cells(meta: dict, name: str) -> dict[str, object]:
    spec = meta["setups"][name]
    profile = meta["profiles"][spec["profile"]]
    state = meta["variants"][f"iceberg/{name}"]
    return {
        "vectorization": bool(spec["spark_conf"].get(VECTORIZATION)),
        "pruning": bool(spec["spark_conf"].get(NESTED_PRUNING)),
        "target": profile.get("manifest_target_size"),
        "expire": bool(profile.get("expire_snapshots")),
        "manifests": state["manifests"],
        "snapshots": state["snapshots"],
    }


def setups(c: Canonical) -> dict[str, object]:
    """The setups: switches from run.json's setups, manifests and snapshots from its variants, and
    which settings differ from the initial setup's (`changed`)."""
    meta = c.meta
    figures = {meta["figures"][role]: label for role, label in FIGURES.items()}
    base = _setup_cells(meta, meta["figures"]["initial"])
    rows = []
    for name in meta["setups"]:
        cells = _setup_cells(meta, name)
        changed = [key for key, value in cells.items() if value != base[key]]
        rows.append({"name": name, "figure": figures.get(name), "changed": changed, **cells})
    return {"setups": rows}


def _spread_of(minutes: pd.Series) -> dict[str, float] | None:
    """The shortest, longest and mean of the rounds' minutes, with their count; None for no round."""
    if minutes.empty:
        return None
    return {"min": minutes.min(), "max": minutes.max(), "mean": minutes.mean(), "n": len(minutes)}


def steady_state(c: Canonical, minutes: float) -> dict[str, object] | None:
    """What the steady-state phase did (run.json `steady_state`; `minutes` it took), or None when
    it was off."""
    p, record = c.meta["protocol"], c.meta.get("steady_state")
    if not p.get("steady_k") or not record:
        return None
    cases = record["cases"]
    settled = [x for x in cases if x["settled"]]
    return {
        "settled": len(settled),
        "cases": len(cases),
        "needed": statistics.median(x["warmups"] for x in settled) if settled else float("nan"),
        "minutes": minutes,
        "capped": sorted({short(x["query_id"]) for x in cases if not x["settled"]}),
    }


def protocol(c: Canonical, steady_minutes: float) -> dict[str, object]:
    """The warm cache, the rounds, the rotation and what a round costs; `steady_minutes`, what the
    steady-state phase took."""
    rounds = round_minutes(c.measurements).xs(False, level="warmup")
    executed = rounds[rounds.index.get_level_values("executed")]
    planned = rounds[~rounds.index.get_level_values("executed")]
    return {
        "p": {"steady_k": None, **c.meta["protocol"]},
        "cache": c.meta.get("page_cache") or {},
        "dataset": c.dataset,
        "variants": len(c.meta["variants"]),
        "queries": len(c.windows),
        "executed_round": _spread_of(executed),
        "planned_round": _spread_of(planned),
        "cores": c.run.env()["machine"]["cores"],
        "steady": steady_state(c, steady_minutes),
    }


def answers(c: Canonical) -> dict[str, object]:
    """answers.json's records (`checked`) and the variants they compared."""
    checked = json.loads((c.run.path / "answers.json").read_text())
    return {
        "dataset": c.dataset,
        "variants": sorted({rec["variants"] for rec in checked}),
        "checked": checked,
    }


def run_facts(c: Canonical, defaults: dict) -> dict[str, object]:
    """Which run, on what: its dataset, rows and machine, and the protocol settings that differ
    from `defaults` (today's): what the command that made it needs on top of
    `experiment=canonical` (a reference run can predate a default)."""
    machine = c.run.env().get("machine") or {}
    return {
        "dataset": c.dataset,
        "overrides": {k: v for k, v in c.meta["protocol"].items() if k in defaults and defaults[k] != v},
        "rows": c.meta["rows"],
        "cores": machine.get("cores", "?"),
        "memory_gib": machine.get("memory_gib", "?"),
        "queries": len(c.windows),
    }
