"""The generated blocks of docs/doctor.md (the doctor against `manifest_health` at medium, the
shape catalogue, its rewrites judged) and docs/history.md (the time to a report per table size),
from the `doctor`, `doctor_catalogue` and `manifest_health` reference runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from icelab.analysis import doctor_reports, shape_catalogue
from icelab.core.runs import Run, find_runs
from icelab.core.units import num
from icelab.health.anchor import RATIO_ERROR
from icelab.tools.docs.markdown import render
from icelab.tools.docs.sources import provenance, reference_run


def doctor_runs(results: Path) -> list[Run]:
    """Every complete doctor reference run, oldest first; LookupError when there is none."""
    runs = [r for r in find_runs(results / "reference") if r.experiment == "doctor" and r.complete]
    if not runs:
        raise LookupError(f"no complete doctor run under {results / 'reference'}")
    return sorted(runs, key=lambda r: r.run_id)


def against_health(results: Path) -> str:
    """Per table state of the manifest_health reference run: what the doctor run on it found."""
    health = reference_run(results, "manifest_health")
    rows = doctor_reports.against_health(health, doctor_runs(results))
    if not rows:
        raise LookupError(f"no doctor reference run read a table of manifest_health run {health.run_id}")
    dataset = health.env().get("dataset", {})
    return render("doctor/vs_health.md.j2", rows=rows, provenance=provenance(health), dataset=dataset)


def _span(values: list[float | None], digits: int) -> str:
    """`28.2-30.4` over a row's runs, one figure when they round alike; `-` when none measured."""
    low, high = (num(f((v for v in values if v is not None), default=None), digits) for f in (min, max))
    return low if low == high else f"{low}-{high}"


def _reader(report: dict[str, Any]) -> tuple[tuple, list[float | None]]:
    """One doctor run's row key (table, reader, first window, prediction, model) and its figures."""
    reader, windows = report["reader"], report["states"][0]["windows"]
    first = windows[0] if windows else {}
    p, model = first.get("predicted") or {}, (report.get("planning_model") or {}).get("run") or ""
    by = reader.get("entries_reader", "spark-entries") + " (Avro bytes)" * bool(reader.get("manifests_read"))
    key = (report["table"]["given"], reader["entries"], by, first.get("window"))
    key += (p.get("ms"), p.get("extrapolated"), model.split("/")[0])
    seconds = (report.get("doctor") or {}).get("seconds")
    return key, [reader["steps"].get("entries"), reader["read_seconds"], first.get("measured_ms"), seconds,
                 reader.get("process_seconds")]  # fmt: skip


def readers(results: Path) -> str:
    """Time to a report, smallest table first: a row per table, reader and model, over its runs."""
    runs, groups = doctor_runs(results), {}
    for found in doctor_reports.reader_times(runs):
        key, figures = _reader(found["report"])
        groups.setdefault(key, []).append(figures)
    rows = [
        (k, len(g), [_span(list(f), 0 if i == 2 else 1) for i, f in enumerate(zip(*g, strict=True))])
        for k, g in groups.items()
    ]
    return render("doctor/readers.md.j2", rows=rows, machine=runs[-1].env().get("machine", {}))


def catalogue(results: Path) -> str:
    """The newest doctor_catalogue run: per shape, the verdict, the action, the verdict on the copy."""
    run = reference_run(results, "doctor_catalogue")
    tiny = shape_catalogue.catalogue(run)["tiny"]
    return render(
        "doctor/catalogue.md.j2", rows=shape_catalogue.rows(run), provenance=provenance(run), tiny=tiny
    )


def judged(results: Path) -> str:
    """The newest doctor_catalogue run: per shape rewritten on a copy and window, the error of the
    after the doctor predicted and of its ratio after/now."""
    run = reference_run(results, "doctor_catalogue")
    rows = shape_catalogue.judged(run)
    if not rows:
        raise LookupError(f"doctor_catalogue run {run.run_id} applied no rewrite with measured plans")
    quantile, count = shape_catalogue.ratio_error(run)
    figures = {"quantile": quantile, "count": count, "used": RATIO_ERROR}
    return render("doctor/judged.md.j2", rows=rows, provenance=provenance(run), **figures)


BLOCKS: dict[str, Callable[[Path], str]] = {
    "doctor-vs-health": against_health,
    "doctor-readers": readers,
    "doctor-catalogue": catalogue,
    "doctor-judged": judged,
}
