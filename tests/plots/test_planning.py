"""Charts come back from stored results alone (no Spark), for a run or an experiment's newest run."""

from __future__ import annotations

import shutil

from plots.planning import CHARTS, main


def test_charts_regenerate_from_stored_results(planning_run, tmp_path, capsys):
    copy = tmp_path / "runs" / "smoke" / planning_run.name
    shutil.copytree(planning_run, copy)
    for name in CHARTS:
        (copy / name).unlink()
    assert main([str(copy.parent)]) == 0
    for name in CHARTS:
        assert (copy / name).stat().st_size > 10_000
    assert str(copy / CHARTS[0]) in capsys.readouterr().out


def test_no_run_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("icelab: error: no run directory")
