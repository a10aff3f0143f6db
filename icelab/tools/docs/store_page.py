"""docs/object-store.md's blocks (one each also on claims.md and planning.md): planning, S3 requests
and canonical means on the store beside local disk. Runs: `icelab.analysis.store_runs`; figures:
`icelab.analysis.store_figures`; text: `templates/store_page/`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from icelab.analysis import stats
from icelab.analysis import store_figures as figures
from icelab.analysis.store_runs import OBJECT_STORE, object_runs, place, planning_runs, where
from icelab.core.runs import Run
from icelab.tools.docs import canonical
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, run_minutes


def runs_paragraph(results: Path) -> str:
    """Which runs the tables come from, their protocol and how long they took."""

    def about(r: Run) -> dict[str, object]:
        return {"place": place(r), "provenance": provenance(r), "minutes": run_minutes(r)}

    store = object_runs(results / "reference", "canonical")[-1:]
    return render(
        "store_page/runs.md.j2",
        planning=[about(r) for r in planning_runs(results / "reference")],
        canonical=[about(r) for r in [canonical.load(results).run, *store]],
    )


def planning_table(results: Path) -> str:
    """Median planning ms of `QUERY` per window, one row per (place, variant)."""
    return render("store_page/planning.md.j2", **figures.planning(planning_runs(results / "reference")))


def claims_table(results: Path) -> str:
    """docs/claims.md's table: the study's planning claims (growth and ratios), per place."""
    return render("store_page/claims.md.j2", **figures.claims(planning_runs(results / "reference")))


def planning_note(results: Path) -> str:
    """docs/planning.md's note: its claim that Iceberg plans faster only for wide windows, per place."""
    return render(
        "store_page/planning_note.md.j2", **figures.planning_note(planning_runs(results / "reference"))
    )


def requests_table(results: Path) -> str:
    """Median S3 requests per plan at the narrow and wide windows (places of equal counts on one row)."""
    found = figures.request_counts(planning_runs(results / "reference")[1:])
    rows: dict[str, dict] = {}
    for r in found["rows"]:
        rows.setdefault(f"{r['label']}{r['cells']}", {**r, "places": []})["places"].append(r["place"])
    return render("store_page/requests.md.j2", **{**found, "rows": list(rows.values())})


def reading(results: Path) -> str:
    """What the requests explain, in sentences of figures computed from the runs."""
    return render("store_page/reading.md.j2", **figures.reading(planning_runs(results / "reference")))


def canonical_table(results: Path) -> str:
    """Iceberg / Parquet geometric means of the canonical setups, local disk beside the object store."""
    remote = object_runs(results / "reference", "canonical")[-1:]
    if not remote:
        raise LookupError(f"no complete canonical run under {results / 'reference' / OBJECT_STORE}")
    places, rows = (canonical.load(results), canonical.of_run(remote[0])), []
    for c in places:
        for variant in (c.initial, c.optimized):
            intervals = [canonical.interval(c.versus_ci, variant, part) for part in stats.PARTS]
            cells = [(c.geomean(variant, part), ci) for part, ci in zip(stats.PARTS, intervals, strict=True)]
            rows.append(dict(place=place(c.run), setup=canonical.setup(variant), cells=cells))
    about = [
        {"where": where(c.run), "p": c.meta["protocol"], "ratio": c.geomean(c.initial, "total_ms")}
        for c in places
    ]
    return render(
        "store_page/canonical.md.j2",
        rows=rows,
        places=about,
        store=where(remote[0]),
        kinds=list(figures.REQUESTS),
        per_file=figures.per_file(remote[0]),
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
