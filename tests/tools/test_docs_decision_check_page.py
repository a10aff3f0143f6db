"""The decision checks' result blocks follow the score of their newest stored run: a row per shape
whose counts are the score's windows, the score's verdict, and before any run a line saying so (no Spark)."""

from __future__ import annotations

from pathlib import Path

from icelab.analysis import decision_check, remeasured
from icelab.core.provenance import REPO
from icelab.tools.docs import decision_check_page as page

RESULTS = REPO / "results"


def rows(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def test_before_any_run_each_block_says_none_is_stored(tmp_path: Path) -> None:
    (tmp_path / "reference").mkdir()
    assert page.result(tmp_path).startswith("No held-out run is stored yet")
    assert page.BLOCKS["decision-check-7-result"](tmp_path).startswith("No run is stored yet")


def test_registration_6_rows_count_the_scores_windows() -> None:
    found = decision_check.score(page.newest(RESULTS))
    table = rows(page.result(RESULTS))
    assert [r[0].strip("`") for r in table] == list(dict.fromkeys(w["shape"] for w in found["windows"]))
    within = sum(int(r[2].split(" of ")[0]) for r in table)
    assert within == sum(bool(w["within"]) for w in found["windows"])
    verdict = "PASSES" if found["passes"] else "DOES NOT PASS"
    assert f"The check **{verdict}**." in page.result(RESULTS)


def test_registration_7_and_the_catalogue_count_agreeing_windows() -> None:
    found = remeasured.score(page.newest(RESULTS, "decision_check_7"))
    text = page.BLOCKS["decision-check-7-result"](RESULTS)
    agreed = sum(int(r[3].split(" of ")[0]) for r in rows(text) if r[3] != "-")
    assert agreed == sum(bool(w["within"]) for w in found["windows"])
    assert f"in {found['saving_share']:.0%} of {found['judged_windows']} judged windows" in text
    savings = page.catalogue_savings(RESULTS)
    assert all(len(r[2].split(" / ")) == len(r[3].split(" / ")) for r in rows(savings))
