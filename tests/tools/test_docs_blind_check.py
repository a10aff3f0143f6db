"""The blind checks' generated results follow the stored held-out runs: planted runs the
registered calibration predicts pass, runs slower than it fail on bias, runs of a commit before
the registration are not scored, and no run at all says that nothing is measured yet (no Spark)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from icelab.core.provenance import REPO, git
from icelab.tools import blind_check
from icelab.tools.docs.blind_check_page import result
from tests.analysis.test_blind_check import LOCAL, runs
from tests.analysis.test_calibration import made

FIRST = blind_check.REGISTRATIONS[1]


def results_with(tmp_path: Path, slower: float = 1.0, commit: str | None = None, held: bool = True) -> Path:
    """A results directory: the registered calibration and (`held`) three held-out runs of `commit`."""
    results = tmp_path / "results"
    shipped = results / FIRST.calibration.relative_to("results")
    shipped.parent.mkdir(parents=True)
    shutil.copy(REPO / FIRST.calibration, shipped)
    if held:
        where = results / "reference" / "costmodel-check"
        runs(where, ["a", "b", "b"], slower=slower, **({"commit": commit} if commit else {}))
    return results


def said(results: Path) -> str:
    """The block's text, its lines joined as Markdown reads them."""
    return " ".join(result(results).split())


def test_the_result_says_what_the_check_found(tmp_path):
    # The synthetic runs' planted costs are not this machine's: the registered calibration fails.
    text = said(results_with(tmp_path / "registered"))
    assert "byte for byte the calibration that commit holds" in text
    assert "(after the registration)" in text and "Cells scored: " in text
    assert text.count("): fails") >= 1 and "Result: **does not pass**" in text
    # A calibration fitted on the same planted costs passes, and is named as not the registered one.
    results = results_with(tmp_path / "planted")
    shutil.copy(made(tmp_path, LOCAL), results / FIRST.calibration.relative_to("results"))
    text = said(results)
    assert "NOT the calibration that commit holds" in text
    assert text.count("): holds") == 3 and "Result: **passes**" in text
    assert "`icelab costmodel blind --registration 1` prints every run, cell and state size." in text


def test_runs_measured_before_the_registration_are_not_scored(tmp_path):
    registered = blind_check.registration(REPO / FIRST.calibration, FIRST)["commit"].split()[0]
    before = git(REPO, "rev-parse", f"{registered}^")
    text = said(results_with(tmp_path, commit=before))
    assert f"runs of commit {before[:7]} (NOT after the registration" in text
    assert "Result: **not judged yet**" in text


@pytest.mark.parametrize("number", sorted(blind_check.REGISTRATIONS))
def test_without_a_held_out_run_the_block_says_nothing_is_scored_yet(tmp_path, number):
    """Before its runs, a registration's block names no commit: it reads the same before and
    after the commit that registers it."""
    results = results_with(tmp_path, held=False)
    reg = blind_check.REGISTRATIONS[number]
    (results / reg.calibration.relative_to("results")).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / reg.calibration, results / reg.calibration.relative_to("results"))
    text = " ".join(result(results, number).split())
    assert text == (
        "No held-out run of this registration has measured a cell yet "
        f"(its runs go to `{reg.runs.as_posix()}`): nothing is scored."
    )
