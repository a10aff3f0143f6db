"""The planning and maintenance docs generators compute their figures from the stored runs.

No Spark: each test copies one or two small reference runs into a temporary results directory,
edits what they stored, and checks the generated text follows (or refuses a typed verdict the
edited data no longer supports).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from icelab.analysis.claims import ClaimError
from icelab.analysis.planning_cases import PARQUET, QUERY, WIDE_IQR
from icelab.tools.docs import maintenance, planning

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"


def copy_run(results: Path, experiment: str) -> Path:
    """The newest reference run of `experiment`, copied under `<results>/reference`."""
    source = sorted((REFERENCE / experiment).iterdir())[-1]
    target = results / "reference" / experiment / source.name
    shutil.copytree(source, target)
    return target


def rows_of(block: str) -> dict[str, list[str]]:
    """A generated Markdown table's rows by their first cell (later duplicates get a suffix)."""
    rows: dict[str, list[str]] = {}
    for line in block.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            key = cells[0]
            while key in rows:
                key += "'"
            rows[key] = cells[1:]
    return rows


@pytest.fixture
def eight(tmp_path: Path) -> Path:
    """A results directory holding a copy of the manifest_8mb reference run."""
    copy_run(tmp_path, "manifest_8mb")
    return tmp_path


def measured(run: Path) -> pd.DataFrame:
    return pd.read_parquet(run / "measurements.parquet")


def test_the_8mb_table_is_the_median_of_the_measured_rounds_and_notes_every_wide_iqr(eight: Path) -> None:
    run = next((eight / "reference" / "manifest_8mb").iterdir())
    block = planning.eight_mb(eight)
    header = rows_of(block)["variant"]
    rows = rows_of(block)
    m = measured(run)
    ok = m[~m["warmup"] & (m["status"] == "ok")]
    labels = {
        ("count_window", "parquet"): "parquet, `count_window`",
        ("count_window", "iceberg/as_ingested"): "iceberg as ingested",
        ("count_window", "iceberg/rewrite_8mb"): "iceberg rewritten at 8MB",
    }
    noted = 0
    for (query, variant), name in labels.items():
        case = ok[(ok.query_id == query) & (ok.variant == variant)]
        assert "7d" not in header  # the narrow and the wide window only
        for window in ["1d", "180d"]:
            q1, med, q3 = case[case.window == window]["planning_ms"].quantile([0.25, 0.5, 0.75])
            shown = rows[name][header.index(window)]
            assert shown.split(" ")[0] == f"{med:,.0f}", (name, window, shown)
            if (q3 - q1) / med > WIDE_IQR:
                noted += 1
                assert shown.endswith(f"({(q3 - q1) / med:.0%})"), (name, window, shown)
            else:
                assert "(" not in shown, (name, window, shown)
    assert noted >= 2  # the reference run has wide cells: Parquet 1d, as ingested 1d and 180d
    parquet = ok[(ok.query_id == "count_window") & (ok.variant == "parquet")]
    medians = parquet.groupby("window")["planning_ms"].median()
    growth = medians["180d"] / medians["1d"]
    assert rows["parquet, `count_window`"][header.index("180d / 1d")] == f"**{growth:.1f}x**"


def test_the_8mb_table_follows_edited_measurements(eight: Path) -> None:
    run = next((eight / "reference" / "manifest_8mb").iterdir())
    before = rows_of(planning.eight_mb(eight))["parquet, `count_window`"]
    m = measured(run)
    wide = (m.query_id == "count_window") & (m.variant == "parquet") & (m.window == "180d")
    m.loc[wide, "planning_ms"] *= 3  # every round three times slower: median x3, IQR share unchanged
    m.to_parquet(run / "measurements.parquet", index=False)
    after = rows_of(planning.eight_mb(eight))["parquet, `count_window`"]
    assert before[0] == after[0]  # 1d untouched
    old, new = (float(re.sub(r"[^\d.]", "", cells[1].split(" ")[0])) for cells in (before, after))
    assert new == pytest.approx(3 * old, abs=2)
    old_ratio, new_ratio = (float(cells[2].strip("*x")) for cells in (before, after))
    assert new_ratio == pytest.approx(3 * old_ratio, rel=0.01)


def test_a_typed_verdict_the_data_contradicts_stops_the_generator(eight: Path) -> None:
    run = next((eight / "reference" / "manifest_8mb").iterdir())
    m = measured(run)
    m["iceberg_planning_ms"] = m["planning_ms"] + 5  # Iceberg's clock above the harness's
    m.to_parquet(run / "measurements.parquet", index=False)
    with pytest.raises(ClaimError, match="above Iceberg's own clock"):
        planning.eight_mb(eight)


def test_a_missing_run_is_an_error_not_a_blank(tmp_path: Path) -> None:
    (tmp_path / "reference").mkdir()
    with pytest.raises(LookupError, match="manifest_health"):
        maintenance.health(tmp_path)


def test_expiry_figures_come_from_the_timeline(tmp_path: Path) -> None:
    run = copy_run(tmp_path, "snapshot_expiry")
    timeline = pd.read_parquet(run / "timeline.parquet")
    timeline.loc[timeline["sim_day"] == 3, "commit_probe_ms"] = 123.4
    timeline.to_parquet(run / "timeline.parquet", index=False)
    notes = maintenance.expiry_notes(tmp_path)
    low = timeline["commit_probe_ms"].min()
    assert f"metadata-only commit stays at {low:.0f} to 123 ms" in notes
    assert "not with the dataset's own checksums" in notes  # what the run compares, said as it is


def test_a_median_of_two_executions_prints_both_values_and_no_interval(eight: Path) -> None:
    run = next((eight / "reference" / "manifest_8mb").iterdir())
    m = measured(run)
    done = m[
        ~m["warmup"]
        & (m["status"] == "ok")
        & m["executed"]
        & (m["query_id"] == QUERY)
        & (m["variant"] == PARQUET)
        & (m["window"] == "180d")
    ]
    text = planning.eight_mb(eight)
    each = ", ".join(f"{x / 1e3:,.1f}" for x in sorted(done["execution_ms"]))
    assert f"on Parquet ({each})" in text
    assert f"(median of {len(done)}, each in brackets)" in text
