"""One self-contained HTML page of a whole study: every experiment's charts, each run's
environment and the key ratios, from stored results only (no server, no external resources).

icelab report                                         # -> results/report.html
icelab report --results results/reference --out /tmp/report.html
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import sys
import tempfile
from pathlib import Path

import pandas as pd

from icelab.analysis.stored_run import stored
from icelab.charts import Chart
from icelab.charts.all import WRITERS, draw, results_command
from icelab.charts.schema_table import RECORDS, outcome_table
from icelab.charts.study_figures import sentence, study_charts
from icelab.core.results import write_atomic
from icelab.core.runs import Run, find_runs
from icelab.core.units import SIZE_UNITS

STYLE = """
body{font-family:system-ui,sans-serif;font-size:14px;margin:24px auto;max-width:1200px;padding:0 16px;
color:#222}
h1{font-size:22px} h2{font-size:18px;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}
h3{font-size:15px;margin-top:20px} table{border-collapse:collapse;margin:8px 0;font-size:12px}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top} th{background:#f3f3f3}
.scroll{overflow-x:auto;max-width:100%} p,li,figcaption,summary{overflow-wrap:anywhere}
figure{margin:16px 0} figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:12px;color:#555} .muted{color:#777;font-size:12px} .shows{font-size:15px;margin:4px 0}
details{margin:12px 0} summary{cursor:pointer;color:#555}
"""
# Marks the page once every chart has decoded, so a headless browser can check it.
SCRIPT = """
window.addEventListener('load', function () {
  var body = document.body, page = document.scrollingElement;
  var charts = Array.prototype.slice.call(document.querySelectorAll('img.chart'));
  var loaded = charts.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var links = Array.prototype.slice.call(document.querySelectorAll('a[href^="#"]'));
  var target = function (a) { return a.getAttribute('href').slice(1); };
  var missing = links.filter(function (a) { return !document.getElementById(target(a)); });
  body.setAttribute('data-charts-loaded', String(loaded));
  body.setAttribute('data-anchors', String(links.length));
  body.setAttribute('data-anchors-missing', missing.map(target).join(' '));
  body.setAttribute('data-scroll-width', String(page.scrollWidth));
  body.setAttribute('data-client-width', String(page.clientWidth));
  body.setAttribute('data-load-ms', String(Math.round(performance.now())));
});
"""


def _table(rows: list[tuple[str, object]]) -> str:
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _frame(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, border=0, na_rep="", float_format=_number)


def environment(run: Run) -> str:
    """The run's machine, versions, dataset, code and status, as a table."""
    env, meta = run.env(), run.meta()
    machine, versions = env.get("machine") or {}, env.get("versions") or {}
    ds, git = env.get("dataset") or {}, env.get("git") or {}
    rows = [
        ("run", f"{run.experiment}/{run.run_id} ({run.status})"),
        ("started / finished (UTC)", f"{meta.get('started_utc', '?')} / {meta.get('finished_utc', '?')}"),
        (
            "machine",
            f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
            f"{machine.get('memory_gib', '?')} GiB RAM, {machine.get('os', '?')}",
        ),
        (
            "Python / PySpark / Spark",
            f"{versions.get('python')} / {versions.get('pyspark')} / {versions.get('spark')}",
        ),
        ("Java", versions.get("java")),
        ("Iceberg", f"{versions.get('iceberg')} ({versions.get('iceberg_jar')})"),
        ("DuckDB", versions.get("duckdb")),
        ("dataset", f"{ds['name']}-{ds.get('hash')}" if ds.get("name") else "own tables (no shared dataset)"),
        ("git commit", f"{git.get('commit')}{' (dirty: uncommitted changes)' if git.get('dirty') else ''}"),
    ]
    if meta.get("protocol"):
        rows.append(("protocol", json.dumps(meta["protocol"])))
    return _table(rows)


def _csv(run: Run, name: str, columns: list[str] | None = None) -> pd.DataFrame | None:
    frame = stored(run).table(name)
    if frame is None:
        return None
    return frame[[c for c in frame.columns if c in columns]] if columns else frame


def key_ratios(run: Run) -> str:
    """The run's headline numbers, from the files its experiment wrote."""
    parts = []
    if run.task == "canonical":
        for name, what in (
            (
                "setups.csv",
                "Each Iceberg setup against Parquet "
                "(geometric mean over queries of median ratios; <1 is faster)",
            ),
            ("gains.csv", "Each variant against the initial Iceberg setup (<1 is faster)"),
        ):
            frame = _csv(run, name)
            if frame is not None:
                parts.append(f"<h3>{html.escape(what)}</h3>{_frame(frame)}")
    elif run.task == "planning":
        frame = _csv(run, "growth.csv")
        if frame is not None:
            keep = [
                c
                for c in frame.columns
                if c.startswith(
                    (
                        "query_id",
                        "variant",
                        "planning_ms_median",
                        "manifests_scanned",
                        "planning_ratio",
                        "iceberg_planning_ratio",
                    )
                )
            ]
            parts.append(
                f"<h3>Planning growth, wide window over narrow (median ms)</h3>{_frame(frame[keep])}"
            )
    elif run.task == "manifest_health":
        report = json.loads((run.path / "report.json").read_text())
        frame = pd.DataFrame(
            {
                "state": h["state"],
                "manifests": h["manifests"],
                "manifest MB": h["manifest_bytes"] / SIZE_UNITS["MB"],
                "bounds per day: max": h["stats"]["bounds"]["max"],
                "span median": h["stats"]["span"]["median"],
                "verdict": h["verdict"],
                "reasons": "; ".join(h["reasons"]),
            }
            for h in report
        )
        parts.append(f"<h3>Verdicts</h3>{_frame(frame)}")
    elif run.task == "doctor":
        parts.append(doctor_section(json.loads((run.path / "report.json").read_text())))
    elif run.task == "snapshot_expiry":
        summary = json.loads((run.path / "expiry.json").read_text())
        cols = [
            "snapshots",
            "manifests",
            "metadata_json_bytes",
            "metadata_files",
            "commit_probe_ms",
            "planning_ms",
        ]
        frame = pd.DataFrame(
            [{"point": k, **{c: summary[k].get(c) for c in cols}} for k in ("before", "after")]
        )
        note = f"rows {summary.get('rows'):,}, unchanged by expiry: {summary.get('unchanged')}"
        parts.append(
            f"<h3>Before and after expiry</h3>{_frame(frame)}<p class='muted'>{html.escape(note)}</p>"
        )
    elif run.task == "schema_evolution":
        counts = run.meta().get("outcomes", {})
        table = outcome_table(pd.read_parquet(run.path / RECORDS))
        parts.append(
            f"<h3>Outcomes: {html.escape(json.dumps(counts))}</h3>"
            + table.to_html(index=False, border=0, escape=True)
        )
    return "".join(parts)


def doctor_section(report: dict) -> str:
    """A doctor run: the table, how long reading took, each state's verdict, the advice."""
    table, reader = report["table"], report["reader"]
    rows = [
        ("table", table.get("described")),
        ("partition specs", "; ".join(f"{k}: {v}" for k, v in (table.get("specs") or {}).items())),
        (
            "read",
            f"{reader['read_seconds']:.2f} s + {reader['load_seconds']:.2f} s to load "
            f"({reader['name']}; {reader['manifests']:,} manifests, {reader['entries']:,} entries)",
        ),
        (
            "exit code",
            f"{report['exit_code']} ({report['verdict']}; actions: {', '.join(report['actions']) or 'none'})",
        ),
    ]
    states = pd.DataFrame(
        {
            "state": h["state"],
            "manifests": h["manifests"],
            "manifest MB": h["manifest_bytes"] / SIZE_UNITS["MB"],
            "partitions": h["partitions"],
            "bounds per partition: p90": h["stats"]["bounds"]["p90"],
            "span median": h["stats"]["span"]["median"],
            "data files": h["files"]["data_files"],
            "delete files": h["deletes"]["delete_files"],
            "snapshots (expirable)": f"{h['snapshots']['count']} ({h['snapshots']['expirable']})",
            "verdict": h["verdict"],
            "why": h.get("why", ""),
            "reasons": "; ".join(h["reasons"]),
        }
        for h in report["states"]
    )
    advice = report["states"][0]["advice"]
    statements = "".join(
        f"<li><code>{html.escape(st['text'])}</code> ({'applied by --apply' if st['applies'] else 'review'}: "
        f"{html.escape(st['why'])})</li>"
        for st in advice["statements"]
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in advice["notes"])
    return (
        f"<h3>Table</h3>{_table(rows)}<h3>Verdicts</h3>{_frame(states)}"
        f"<h3>Advice</h3><p>{html.escape(advice['target_reason'])}</p>"
        + (f"<ul>{statements}</ul>" if statements else "")
        + (f"<p class='muted'>Notes:</p><ul>{notes}</ul>" if notes else "")
    )


def figure(chart: Chart) -> str:
    """A chart as an embedded PNG with its caption."""
    data = base64.b64encode(chart.png.read_bytes()).decode("ascii")
    return (
        f"<figure><img class='chart' alt='{html.escape(chart.title)}' src='data:image/png;base64,{data}'>"
        f"<figcaption><b>{html.escape(chart.title)}.</b> {html.escape(chart.caption)}</figcaption></figure>"
    )


def study_section(runs: dict[str, Run], charts: dict[str, list[Chart]]) -> tuple[str, set[int]]:
    """The study's figures, each with the sentence of what its run shows; and which charts they are."""
    found = study_charts(runs, charts)
    if not found:
        return "", set()
    figures = "".join(
        f"<div id='figure-{n}-{html.escape(e)}' class='study'><h3>Figure {n} ({html.escape(e)})</h3>"
        f"<p class='shows'>{html.escape(sentence(runs[e]))}</p>{figure(c)}</div>"
        for n, e, c in found
    )
    section = f"<section id='study'><h2>The study's figures</h2>{figures}</section>"
    return section, {id(c) for _, _, c in found}


def experiment_section(experiment: str, run: Run, charts: list[Chart], shown: set[int]) -> str:
    """One experiment: its key table, its other charts, then its environment and provenance folded."""
    others = "".join(figure(c) for c in charts if id(c) not in shown)
    return (
        f"<section id='run-{html.escape(experiment)}'><h2>{html.escape(experiment)}</h2>"
        f"<p class='muted'>{html.escape(run.task)}, run {html.escape(run.run_id)}</p>"
        f"{key_ratios(run)}{others}"
        "<details class='provenance'><summary>Environment and provenance</summary>"
        f"{environment(run)}</details>"
        "</section>"
    )


def render(runs: dict[str, Run], charts: dict[str, list[Chart]], skipped: list[Run], results: Path) -> str:
    """The whole page: the study's figures first, then per experiment its key table, with its
    environment and provenance folded away; every table scrolls inside its own box."""
    total = sum(len(c) for c in charts.values())
    study, shown = study_section(runs, charts)
    toc = (("<li><a href='#study'>The study's figures</a></li>") if study else "") + "".join(
        f"<li><a href='#run-{html.escape(e)}'>{html.escape(e)}</a> ({r.task}, run {r.run_id})</li>"
        for e, r in runs.items()
    )
    sections = "".join(experiment_section(e, r, charts[e], shown) for e, r in runs.items())
    skipped_note = ""
    if skipped:
        listed = ", ".join(f"{r.experiment}/{r.run_id} ({r.status})" for r in skipped)
        skipped_note = f"<p class='muted'>Not shown (not complete): {html.escape(listed)}</p>"
    made = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = (
        f"<body data-charts-total='{total}'><h1>icelab: Iceberg vs Parquet, from stored results</h1>"
        f"<p class='muted'>From {html.escape(str(results))}, made {made}; {total} charts. "
        "Regenerate with <code>icelab report</code>.</p>"
        f"<nav id='contents'><h2>Contents</h2><ul>{toc}</ul></nav>{skipped_note}{study}{sections}"
    )
    # Every table in a box of its own that scrolls sideways, so the page itself never does.
    body = body.replace("<table", "<div class='scroll'><table").replace("</table>", "</table></div>")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>icelab report</title><style>{STYLE}</style></head>"
        f"{body}<script>{SCRIPT}</script></body></html>\n"
    )


def build(runs: dict[str, Run], results: Path, out: Path) -> int:
    """Draw every chart of `runs` into a scratch directory and write the page; the number of charts."""
    shown = {r.path for r in runs.values()}
    skipped = [r for r in find_runs(results) if not r.complete and r.path not in shown and r.task in WRITERS]
    with tempfile.TemporaryDirectory() as scratch:
        charts = draw(runs, Path(scratch))
        page = render(runs, charts, skipped, results)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, page)
    return sum(len(c) for c in charts.values())


def main(argv: list[str] | None = None) -> int:
    """Write one self-contained HTML report of the newest complete run of each experiment."""
    return results_command("icelab report", main.__doc__, "report.html", "the HTML file", argv, _write)


def _write(runs: dict[str, Run], out: Path, results: Path) -> int:
    """Write the report of the chosen runs to `out`; one line saying where and how large."""
    count = build(runs, results, out)
    print(f"report: {out} ({count} charts, {out.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
