"""docs/doctor.md's generated blocks follow the stored doctor and manifest_health runs: a
statistic, a verdict or a timing changed in a stored report changes the page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from icelab.tools.docs.doctor import against_health, doctor_runs, readers

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """The reference manifest_health runs and a copy of the doctor runs, to edit."""
    ref = tmp_path / "reference"
    ref.mkdir()
    (ref / "manifest_health").symlink_to(REFERENCE / "manifest_health", target_is_directory=True)
    shutil.copytree(REFERENCE / "doctor", ref / "doctor")
    return tmp_path


def rows(text: str) -> list[list[str]]:
    """The data rows of the first Markdown table in `text`, cell by cell."""
    lines = [line for line in text.splitlines() if line.startswith("| ")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def matched_report(results: Path) -> Path:
    """report.json of the first doctor run that read a manifest_health table state."""
    for run in doctor_runs(results):
        path = run.path / "report.json"
        if "/iceberg/bench/events/" in json.loads(path.read_text())["table"]["metadata_file"]:
            return path
    raise AssertionError("no doctor reference run read a manifest_health table")


def test_the_reference_doctor_runs_agree_with_manifest_health(results: Path) -> None:
    table = rows(against_health(results))
    assert [row[0] for row in table] == ["`as_ingested`", "`rewrite_256kb`"]
    for state, manifests, nbytes, verdict, reasons, equal, _exit, _run in table:
        mine, theirs = manifests.split(" / ")
        assert mine == theirs and len(set(nbytes.split(" / "))) == 1, state
        assert len(set(verdict.split(" / "))) == 1 and reasons == "same", state
        same, total = equal.split(" of ")
        assert same == total and int(total) > 30, state


def test_a_changed_statistic_and_verdict_show(results: Path) -> None:
    path = matched_report(results)
    report = json.loads(path.read_text())
    report["states"][0]["stats"]["bounds"]["p90"] += 1
    report["states"][0]["verdict"] = "changed"
    path.write_text(json.dumps(report))
    changed = [row for row in rows(against_health(results)) if row[-1] == f"`{path.parent.name}`"]
    (row,) = changed
    assert row[3].endswith(" / changed")
    same, total = row[5].split(" of ")
    assert int(same) == int(total) - 1


def test_time_to_a_report_per_table_and_reader_smallest_table_first(results: Path) -> None:
    table = rows(readers(results))
    entries = [int(row[1].replace(",", "")) for row in table]
    assert entries == sorted(entries) and max(entries) >= 1_000_000
    assert sum(int(row[3]) for row in table) == len(doctor_runs(results))  # every run in one row
    path = matched_report(results)
    report = json.loads(path.read_text())
    report["reader"]["process_seconds"] = 1234.5
    path.write_text(json.dumps(report))
    assert "1,234.5" in readers(results)
