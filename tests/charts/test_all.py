"""Every chart comes back from stored results alone, as PNG and SVG, from the newest complete
run of each experiment or the runs named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from matplotlib import pyplot as plt

from icelab.charts import style
from icelab.charts.all import main
from icelab.charts.canonical import main as canonical_main
from icelab.core.contract import read_measurements

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"
CHARTS = {
    "canonical": ["figure8_initial", "figure9_optimized", "optimization_gains"],
    "manifest_8mb": ["planning_vs_window", "manifests_vs_window", "iceberg_vs_harness_planning"],
    "manifest_health": ["manifests_per_partition", "manifest_sizes"],
    "snapshot_expiry": ["expiry"],
    "schema_evolution": ["schema_outcomes"],
}


@pytest.fixture(scope="module")
def figures() -> dict[str, plt.Figure]:
    """Every figure the charts save, by file stem (what was drawn, not just that a file exists)."""
    return {}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory, figures) -> Path:
    out = tmp_path_factory.mktemp("charts")
    real = style.save

    def keep(fig: plt.Figure, path: Path) -> list[Path]:
        figures[Path(path).stem] = fig
        return real(fig, path)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(style, "save", keep)
        assert main(["--results", str(FIXTURE), "--out", str(out)]) == 0
    return out


def plotted(fig: plt.Figure) -> int:
    """How many data marks a figure holds: points of lines, bars and patches, table cells."""
    marks = 0
    for ax in fig.axes:
        marks += sum(len(line.get_xdata()) for line in ax.lines)
        marks += len(ax.patches) + sum(
            len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets")
        )
        marks += sum(len(t.get_celld()) for t in ax.tables)
    return marks


def test_every_chart_as_png_and_svg_with_data_drawn(drawn, figures):
    for experiment, names in CHARTS.items():
        for name in names:
            png, svg = drawn / experiment / f"{name}.png", drawn / experiment / f"{name}.svg"
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
            assert "<svg" in svg.read_text()[:500], svg
            assert plotted(figures[name]) >= 2, name  # an empty axes would pass a file-size check


def test_the_planning_chart_plots_each_variants_median_planning(drawn, figures):
    rows = read_measurements(FIXTURE / "manifest_8mb" / "20261121T114416Z-ac7555")
    medians = rows[~rows.warmup].groupby(["query_id", "variant", "window_hours"]).planning_ms.median()
    fig = figures["planning_vs_window"]
    checked = 0
    for ax in fig.axes:
        query = ax.get_title()
        for bars in ax.containers:  # one errorbar per variant: its data line, IQR bars around it
            variant, line = bars.get_label(), bars.lines[0]
            expected = medians.xs((query, variant), level=("query_id", "variant"))
            assert list(line.get_xdata()) == list(expected.index), (query, variant)
            assert list(line.get_ydata()) == pytest.approx(list(expected)), (query, variant)
            checked += 1
    assert checked == rows[["query_id", "variant"]].drop_duplicates().shape[0]
    assert (drawn / "schema_evolution" / "outcomes.html").is_file()
    assert sorted(p.name for p in drawn.iterdir()) == sorted(CHARTS)


def test_the_footer_names_the_newest_run_and_its_provenance(drawn):
    svg = (drawn / "manifest_8mb" / "planning_vs_window.svg").read_text()
    assert "manifest_8mb | dataset medium-4149ea9e8a87 | run 20261121T114416Z-ac7555 | commit 6775805" in svg
    assert "planning time (ms, median; bars: IQR)" in svg  # axes say their unit and spread


def test_a_named_run_replaces_the_newest(tmp_path, capsys):
    older = "20261121T114058Z-ef97e6"
    results = tmp_path / "results"  # manifest_8mb's runs alone: the other charts are drawn above
    results.mkdir()
    (results / "manifest_8mb").symlink_to(FIXTURE / "manifest_8mb", target_is_directory=True)
    out = tmp_path / "charts"
    assert main(["--results", str(results), "--out", str(out), "--run", f"manifest_8mb={older}"]) == 0
    assert f"run {older}" in (out / "manifest_8mb" / "planning_vs_window.svg").read_text()
    assert f"manifest_8mb      {older} (complete): 3 charts, 6 files" in capsys.readouterr().out


def test_an_incomplete_run_is_skipped_unless_asked(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(FIXTURE / "snapshot_expiry", results / "runs" / "snapshot_expiry")
    shutil.copytree(FIXTURE / "canonical", results / "reference" / "canonical")
    running = results / "runs" / "canonical" / "20261122T000000Z-aaaaaa"
    shutil.copytree(FIXTURE / "canonical" / "20261121T134249Z-cce90f", running)
    meta = json.loads((running / "run.json").read_text())
    (running / "run.json").write_text(json.dumps(meta | {"status": "running"}))
    assert main(["--results", str(results)]) == 0
    charts = results / "charts"  # the default: <results>/charts
    assert sorted(p.name for p in charts.iterdir()) == ["canonical", "snapshot_expiry"]
    assert "run 20261121T134249Z-cce90f" in (charts / "canonical" / "optimization_gains.svg").read_text()
    assert main(["--results", str(results), "--include-incomplete"]) == 0
    assert f"run {running.name}" in (charts / "canonical" / "optimization_gains.svg").read_text()


def test_bad_requests_are_one_line(tmp_path, capsys):
    assert main(["--results", str(tmp_path)]) == 2
    assert "no complete run with charts" in capsys.readouterr().err
    assert main(["--results", str(FIXTURE), "--run", "canonical"]) == 2
    assert "bad --run 'canonical'" in capsys.readouterr().err
    assert main(["--results", str(FIXTURE), "--run", "canonical=nope"]) == 2
    assert "no run canonical/nope" in capsys.readouterr().err


def test_a_module_cli_still_redraws_into_the_run(tmp_path, capsys):
    run = tmp_path / "canonical" / "20261121T134249Z-cce90f"
    shutil.copytree(FIXTURE / "canonical" / run.name, run)
    assert canonical_main([str(run.parent)]) == 0
    assert (run / "figure8_initial.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "figure8_initial.svg").is_file()
    assert str(run / "optimization_gains.svg") in capsys.readouterr().out
