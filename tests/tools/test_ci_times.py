"""icelab.tools.ci_times reads a `.ci/run` log's step lines and pytest's summary, and refuses a
log cut short; docs/prerequisites.md's block renders the newest stored record. No Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from icelab.tools import ci_times
from icelab.tools.docs import prerequisites

LOG = """install: 70 s
All checks passed!
1107 passed, 28 warnings in 1234.08s (0:20:34)
tests: 1309 s
smoke: 60 cases x 3 rounds
tutorials: 2781 s
ci total: 2788 s
"""


def test_a_whole_log_gives_each_step_and_the_suite() -> None:
    assert ci_times.parse(LOG) == {
        "install_s": 70,
        "tests_s": 1309,
        "tutorials_s": 2781,
        "total_s": 2788,
        "passed": 1107,
        "pytest_s": 1234.08,
    }


def test_a_log_cut_short_is_refused_with_what_is_missing(tmp_path: Path) -> None:
    cut = LOG.split("tutorials:")[0]
    with pytest.raises(ci_times.NotACiLog, match="^no tutorials, ci total line"):
        ci_times.parse(cut)
    (tmp_path / "ci.log").write_text(cut)
    assert ci_times.main([str(tmp_path / "ci.log"), "--commit", "0" * 40, "--dest", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "r").exists()


def test_the_prerequisites_block_shows_the_newest_record(tmp_path: Path) -> None:
    base = tmp_path / "results" / "reference" / "ci"
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    ci_times.record(log, "a" * 40, base / "20260101-old")
    log.write_text(LOG.replace("1107 passed", "1200 passed").replace("in 1234.08s", "in 600.00s"))
    ci_times.record(log, "b" * 40, base / "20260201-new")
    text = prerequisites.ci_times(tmp_path / "results")
    assert "commit bbbbbbb" in text and "`results/reference/ci/20260201-new/ci.json`" in text
    assert "(1,200 tests passed) | 10.0 min |" in text
    assert json.loads((base / "20260201-new" / "ci.json").read_text())["machine"]["cores"]
