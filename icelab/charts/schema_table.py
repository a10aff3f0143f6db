"""The scenario x outcome table of a stored `schema_evolution` run, as markdown, HTML and a
coloured figure (PNG and SVG).

python -m icelab.charts.schema_table results/runs/schema_evolution/<run_id>
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

import pandas as pd

from icelab.charts import Chart, chart_cli
from icelab.charts.style import OUTCOME_COLORS, finish, plt
from icelab.core.results import write_atomic

RECORDS = "scenarios.parquet"
HEADERS = (
    "scenario",
    "changes",
    "field ids: before -> after",
    "old rows non-null: time travel",
    "current",
    "Parquet by name",
    "new rows non-null",
    "engine",
    "what the engine did",
    "checker",
    "agree",
)


def _col(field: dict) -> str:
    return f"{field['name']}={field['id']} {field['type']}"


def id_change(before: list[dict], after: list[dict]) -> str:
    """The columns whose id, name or type differ, as `name=id type`; or `unchanged`."""
    gone = [f for f in before if f not in after]
    new = [f for f in after if f not in before]
    if not gone and not new:
        moved = [f["name"] for f in before] != [f["name"] for f in after]
        return "same ids, new order" if moved else "unchanged"
    return f"{', '.join(map(_col, gone)) or '-'} -> {', '.join(map(_col, new)) or '-'}"


def short(text: str, limit: int = 110) -> str:
    """The first sentence of an error, at most `limit` characters (the record keeps it whole)."""
    head = text.split(". ", 1)[0]
    return head if len(head) <= limit else head[: limit - 3] + "..."


def _count(value: object, error: object = None) -> str:
    if isinstance(error, str) and error:
        return f"error: {short(error)}"
    return "" if value is None or pd.isna(value) else f"{int(value):,}"  # type: ignore[arg-type]


def outcome_table(records: pd.DataFrame) -> pd.DataFrame:
    """One display row per scenario."""
    rows = []
    for r in records.itertuples(index=False):
        rows.append(
            [
                r.scenario,
                "; ".join(json.loads(r.changes)),
                id_change(json.loads(r.ids_before), json.loads(r.ids_after)),
                _count(r.tt_old_nonnull, r.time_travel_error),
                _count(r.current_old_nonnull, r.current_error),
                _count(r.parquet_old_nonnull, r.parquet_error),
                _count(r.current_new_nonnull, r.write_error),
                r.engine_outcome,
                "; ".join(short(p) for p in r.engine_reason.split("; ")),
                r.checker_verdict,
                "yes" if r.agree else "NO",
            ]
        )
    return pd.DataFrame(rows, columns=list(HEADERS))


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub markdown table (pipes in cells escaped)."""

    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(table.columns) + " |",
        "| " + " | ".join("---" for _ in table.columns) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def to_html(table: pd.DataFrame, title: str) -> str:
    """A standalone HTML page holding the table."""
    body = table.to_html(index=False, escape=True, border=0, classes="outcomes")
    style = (
        "body{font-family:sans-serif;font-size:13px} table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}"
        "th{background:#f0f0f0}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body><h2>{html.escape(title)}</h2>{body}</body></html>\n"
    )


# The figure keeps the columns that fit a cell; the HTML and markdown tables keep every one.
FIGURE_COLUMNS = HEADERS[3:8] + HEADERS[9:]
LOST = "#ffc7ce"  # a count of 0 or an error: old values no longer readable that way


def _cell_color(header: str, value: str) -> str:
    if header in ("engine", "checker"):
        return OUTCOME_COLORS.get(value, "white")
    if header == "agree":
        return OUTCOME_COLORS["safe"] if value == "yes" else LOST
    return LOST if value == "0" or value.startswith("error") else "white"


def outcome_figure(table: pd.DataFrame, run_dir: Path, path: Path) -> list[Path]:
    """The outcome table as a coloured grid: one row per scenario, outcome and visibility columns."""
    shown = table[list(FIGURE_COLUMNS)].map(lambda v: "error" if str(v).startswith("error") else str(v))
    fig, ax = plt.subplots(figsize=(12, 0.3 * len(shown) + 1.4))
    ax.axis("off")
    grid = ax.table(
        cellText=shown.values,
        rowLabels=table["scenario"].tolist(),
        colLabels=[c.replace("old rows non-null: ", "old rows non-null:\n") for c in FIGURE_COLUMNS],
        cellColours=[
            [_cell_color(h, v) for h, v in zip(FIGURE_COLUMNS, row, strict=True)] for row in shown.values
        ],
        loc="center",
        cellLoc="center",
    )
    grid.auto_set_font_size(False)
    grid.set_fontsize(8)
    grid.scale(1, 1.25)
    return finish(
        fig, "Schema evolution: outcome per scenario (rows counted; red: old values lost)", run_dir, path
    )


def write_tables(run_dir: Path, out: Path | None = None) -> list[Path]:
    """outcomes.md and outcomes.html from the run's scenarios.parquet, in `out` (default: the run)."""
    out = out or run_dir
    table = outcome_table(pd.read_parquet(run_dir / RECORDS))
    md, page = out / "outcomes.md", out / "outcomes.html"
    write_atomic(md, to_markdown(table))
    write_atomic(page, to_html(table, f"Schema evolution: scenario x outcome | run {run_dir.name}"))
    return [md, page]


def charts(run_dir: Path, out: Path | None = None) -> list[Chart]:
    """The outcome tables (markdown, HTML) and the outcome figure, in `out` (default: the run)."""
    out = out or run_dir
    table = outcome_table(pd.read_parquet(run_dir / RECORDS))
    tables = write_tables(run_dir, out)
    figure = outcome_figure(table, run_dir, out / "schema_outcomes.png")
    return [
        Chart(
            "Schema evolution: scenario x outcome",
            "Engine outcome beside the checker's verdict; non-null counts of the followed column over "
            "old rows (time travel, current snapshot, Parquet by name) and new rows. One execution per "
            "scenario: counts are exact, there is no timing. Full table: outcomes.html / outcomes.md.",
            figure + tables,
        )
    ]


def main(argv: list[str] | None = None) -> int:
    """Rewrite a stored schema_evolution run's outcome tables."""
    return chart_cli("python -m icelab.charts.schema_table", argv, write_tables, "schema_evolution")


if __name__ == "__main__":
    sys.exit(main())
