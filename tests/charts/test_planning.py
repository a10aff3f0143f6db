"""Charts come back from stored results alone (no Spark), for a run or an experiment's newest run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.charts import draw_charts
from icelab.charts.health import main as health_main
from icelab.charts.planning import CHARTS, main, write_charts

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "results"
CHARTS_FILES = [f for name in CHARTS for f in (name, str(Path(name).with_suffix(".svg")))]
OLDER, NEWER = "20261121T114058Z-ef97e6", "20261121T114416Z-ac7555"


def test_charts_regenerate_from_stored_results(planning_run, tmp_path, capsys):
    copy = tmp_path / "runs" / "smoke" / planning_run.name
    shutil.copytree(planning_run, copy)
    for name in CHARTS:
        (copy / name).unlink()
        (copy / name).with_suffix(".svg").unlink()
    assert main([str(copy.parent)]) == 0
    for name in CHARTS:  # the same chart the run drew, from its stored measurements alone
        svg = Path(name).with_suffix(".svg").name
        assert (copy / svg).read_text() == (planning_run / svg).read_text().replace(
            str(planning_run), str(copy)
        ), svg
        assert (copy / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(copy / CHARTS[0]) in capsys.readouterr().out


def test_charts_false_draws_nothing_and_says_how_to_draw_later(planning_run, tmp_path):
    copy = tmp_path / planning_run.name
    shutil.copytree(planning_run, copy, ignore=shutil.ignore_patterns("*.png", "*.svg"))
    said = draw_charts(False, write_charts, copy)
    assert said == "charts: not drawn (charts=false; `icelab charts` draws them from the results)"
    assert not list(copy.glob("*.png")) and not list(copy.glob("*.svg"))
    assert draw_charts(True, write_charts, copy) == f"charts: {', '.join(CHARTS_FILES)}"
    assert sorted(p.name for p in copy.glob("*.[ps][nv]g")) == sorted(CHARTS_FILES)


def test_no_run_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"icelab: error: no run under {tmp_path}\n"


@pytest.fixture
def experiment(tmp_path) -> Path:
    """An experiment directory whose newest run was interrupted."""
    path = tmp_path / "manifest_8mb"
    shutil.copytree(FIXTURE / "manifest_8mb", path)
    meta = json.loads((path / NEWER / "run.json").read_text())
    (path / NEWER / "run.json").write_text(json.dumps(meta | {"status": "interrupted"}))
    return path


def test_the_newest_complete_run_is_drawn_unless_asked(experiment, capsys):
    assert main([str(experiment)]) == 0
    assert (experiment / OLDER / CHARTS[0]).is_file() and not (experiment / NEWER / CHARTS[0]).exists()
    assert capsys.readouterr().err == ""
    assert main([str(experiment), "--include-incomplete"]) == 0
    assert (experiment / NEWER / CHARTS[0]).is_file()
    assert "is not complete (status 'interrupted')" in capsys.readouterr().err


def test_a_run_named_by_directory_is_drawn_with_a_warning(experiment, capsys):
    assert main([str(experiment / NEWER)]) == 0
    assert (experiment / NEWER / CHARTS[0]).is_file()
    assert capsys.readouterr().err == (
        f"icelab: warning: {experiment / NEWER} is not complete (status 'interrupted')\n"
    )


def test_a_run_of_another_task_is_refused(capsys):
    assert health_main([str(FIXTURE / "manifest_8mb" / OLDER)]) == 2
    assert (
        "is a planning run; python -m icelab.charts.health draws manifest_health or doctor runs"
        in capsys.readouterr().err
    )
