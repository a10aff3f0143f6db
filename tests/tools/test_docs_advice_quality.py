"""docs/advice-quality.md's table (icelab.tools.docs.advice_quality): one row per registration in
the order registered, each with the result its registered condition gives as the scorer computes
it (`blind_check.outcome`), and a part that held said beside a check that failed (no Spark)."""

from __future__ import annotations

import copy
import dataclasses

import jinja2
import pytest

from icelab.core.provenance import REPO
from icelab.tools import blind_check
from icelab.tools.docs import advice_quality

RESULTS = REPO / "results"
WORD = {True: "PASS", False: "FAIL", None: "not judged yet"}


def rows(text: str) -> list[str]:
    """The table's rows (each begins with its check's link)."""
    return [line for line in text.splitlines() if line.startswith("| [")]


def test_every_registration_is_one_row_in_order_with_its_registered_result():
    found = rows(advice_quality.checks(RESULTS))
    numbers = sorted(blind_check.REGISTRATIONS)
    assert [line.split("]")[0].removeprefix("| [") for line in found] == [str(n) for n in numbers]
    for number, line in zip(numbers, found, strict=True):
        passed = advice_quality.score_of(RESULTS, number)["outcome"]["passed"]
        assert f"| **{WORD[passed]}** |" in line
    # The second: its held-out states met the criterion, the tables other engines wrote did not,
    # and its condition names both: FAIL, with the part that held in the note.
    second = found[numbers.index(2)]
    assert "| **FAIL** | Held on held-out states. Failed on other engines' tables. |" in second


def test_the_result_is_the_scorers_not_typed(monkeypatch):
    """The second registration's row follows what the scorer says: planted as passing, it reads
    PASS with no note; not judged yet, it says so."""
    real = advice_quality.score_of

    def planted(passed: bool | None):  # noqa: ANN202
        def score_of(results, number):  # noqa: ANN001, ANN202
            found = copy.deepcopy(real(results, number))
            if number == 2:
                found["outcome"]["passed"] = passed
                for part in found["outcome"]["parts"]:
                    part["held"] = passed
            return found

        return score_of

    for passed in (True, None):
        monkeypatch.setattr(advice_quality, "score_of", planted(passed))
        second = rows(advice_quality.checks(RESULTS))[1]
        assert second.endswith(f"| **{WORD[passed]}** | |")


def test_a_registration_the_template_does_not_describe_fails_the_block(monkeypatch):
    """A new registration needs its own words for what it judged: without them the block is not
    written (no row without its description)."""
    monkeypatch.setitem(blind_check.REGISTRATIONS, 9, dataclasses.replace(blind_check.REGISTRATIONS[5]))
    with pytest.raises(jinja2.UndefinedError):
        advice_quality.checks(RESULTS)
