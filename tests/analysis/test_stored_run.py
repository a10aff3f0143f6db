"""A stored run's files are read once while unchanged, read again once rewritten, and what a
caller gets is its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from icelab.analysis.stored_run import stored
from icelab.core.contract import read_measurements

RUN = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "results"
    / "manifest_8mb"
    / "20261121T114416Z-ac7555"
)


def test_the_measurements_are_the_contracts_and_the_callers_own(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    data = stored(run)
    first = data.measurements()
    assert first.equals(read_measurements(run))
    first["planning_ms"] = -1.0  # the caller's copy: the next reader sees the file
    assert data.measurements().equals(read_measurements(run))
    assert len(data.counted()) == (~first["warmup"] & (first["status"] == "ok")).sum()


def test_a_rewritten_file_is_read_again(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    before = stored(run).summary(0.25)
    frame = read_measurements(run)
    frame.loc[~frame["warmup"], "planning_ms"] *= 2
    frame.to_parquet(run / "measurements.parquet", index=False)
    after = stored(run).summary(0.25)
    assert (after["planning_ms_median"] == 2 * before["planning_ms_median"]).all()


def test_a_derived_table_is_none_when_absent_and_a_non_run_is_an_error(tmp_path):
    assert stored(RUN).table("no_such.csv") is None
    with pytest.raises(LookupError, match="not a run directory"):
        stored(tmp_path)
