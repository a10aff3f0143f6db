"""The doctor's findings beside the layout, without a JVM: which failures are a broken table and
which file they name, orphaned metadata from a listing, the advice for each kind of delete file,
and the summary of several tables."""

from __future__ import annotations

import pandas as pd
import pytest

from icelab.health.broken import BrokenTable, diagnose_failure, first_missing, kind
from icelab.health.deletes import delete_advice
from icelab.health.orphans import REMOVE_ORPHANS_DEFAULT_AGE_MS, orphan_advice, orphaned
from icelab.tools.doctor import Checked, summary


class _Java:
    """A stand-in for a py4j Java exception: class name, message, cause."""

    def __init__(self, name: str, message: str, cause: _Java | None = None) -> None:
        self.name, self.message, self.cause = name, message, cause

    def getClass(self):  # noqa: N802 (Java's name)
        return type("C", (), {"getSimpleName": lambda _: self.name})()

    def getMessage(self):  # noqa: N802
        return self.message

    def getCause(self):  # noqa: N802
        return self.cause


class _Failed(Exception):
    def __init__(self, java: _Java) -> None:
        super().__init__("An error occurred while calling o1.collectToPython.")
        self.java_exception = java


MANIFEST = "file:/wh/db/t/metadata/6cfd-m0.avro"


def test_a_missing_manifest_in_a_failed_job_is_named():
    inner = _Java("FileNotFoundException", f"File {MANIFEST} does not exist")
    job = _Java(
        "SparkException", "Job aborted", _Java("NotFoundException", f"Failed to open {MANIFEST}", inner)
    )
    broken = diagnose_failure(_Failed(job), "db.t", None)
    assert isinstance(broken, BrokenTable) and broken.file == MANIFEST
    assert str(broken) == f"broken table db.t: manifest {MANIFEST} is missing; nothing was written to it"


def test_a_json_error_names_the_fallback_metadata_file():
    java = _Java("JsonEOFException", "Unexpected end-of-input in field name")
    broken = diagnose_failure(_Failed(java), "db.t", "/wh/db/t/metadata/v3.metadata.json")
    assert broken is not None and broken.file == "/wh/db/t/metadata/v3.metadata.json"
    assert "metadata file" in str(broken) and "Unexpected end-of-input" in str(broken)


def test_other_failures_are_not_a_broken_table():
    assert (
        diagnose_failure(_Failed(_Java("NoSuchTableException", "Table does not exist")), "db.t", None) is None
    )
    assert diagnose_failure(_Failed(_Java("OutOfMemoryError", "Java heap space")), "db.t", None) is None


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("v3.metadata.json", "metadata file"),
        ("00003-1a2b.metadata.json.gz", "metadata file"),
        ("snap-1-1-abc.avro", "manifest list"),
        ("abc-m0.avro", "manifest"),
    ],
)
def test_metadata_files_are_named_by_kind(name, what):
    assert kind(f"s3a://b/t/metadata/{name}") == what


def test_first_missing_asks_the_file_system_only_off_the_listing():
    asked = []
    exists = lambda p: asked.append(p) or False  # noqa: E731
    paths = ["/t/metadata/a-m0.avro", "/elsewhere/b-m0.avro"]
    assert first_missing(paths, {"a-m0.avro"}, exists) == "/elsewhere/b-m0.avro"
    assert asked == ["/elsewhere/b-m0.avro"]


def test_orphans_are_the_unreferenced_avro_files_with_their_bytes():
    now = 10 * REMOVE_ORPHANS_DEFAULT_AGE_MS
    listing = pd.DataFrame(
        [
            ("snap-1.avro", "/m/snap-1.avro", 100, now),  # current list
            ("snap-0.avro", "/m/snap-0.avro", 90, now - 2 * REMOVE_ORPHANS_DEFAULT_AGE_MS),  # orphan, old
            ("a-m0.avro", "/m/a-m0.avro", 1000, now),  # referenced
            ("b-m0.avro", "/m/b-m0.avro", 700, now),  # orphan, new
            ("v2.metadata.json", "/m/v2.metadata.json", 50, now),  # not a manifest
        ],
        columns=["name", "path", "size", "modified_ms"],
    )
    found = orphaned(listing, {"snap-1.avro"}, {"a-m0.avro"}, now)
    assert (found["files"], found["bytes"]) == (2, 790)
    assert (found["manifests"], found["manifest_bytes"], found["manifest_lists"]) == (1, 700, 1)
    assert found["older_than_default"] == 1
    (advice,) = orphan_advice(found, "cat", "db.t")
    assert advice.sql == "CALL cat.system.remove_orphan_files(table => 'db.t')"
    assert "1 of these 2 are that old now" in advice.note
    assert (
        orphan_advice(
            orphaned(listing, {"snap-0.avro", "snap-1.avro"}, {"a-m0.avro", "b-m0.avro"}, now), "c", "t"
        )
        == []
    )


def _deletes(pos: int, dv: int, eq: int) -> dict:
    return {
        "delete_files": pos + dv + eq,
        "position_delete_files": pos,
        "deletion_vectors": dv,
        "equality_delete_files": eq,
        "delete_records": 30,
        "delete_bytes": 9000,
        "partitions_with_deletes": 3,
        "delete_manifests": 1,
    }


@pytest.mark.parametrize(
    ("counts", "actions"),
    [
        ((6, 0, 0), ["rewrite_position_deletes", "rewrite_deletes"]),
        ((0, 6, 0), ["rewrite_deletes"]),  # a writer keeps one vector per data file already
        ((0, 0, 2), ["rewrite_deletes"]),  # equality deletes go only with compaction
        ((0, 0, 0), []),
    ],
)
def test_each_kind_of_delete_file_gets_its_own_advice(counts, actions):
    found = delete_advice(_deletes(*counts), "cat", "db.t")
    assert [f.action for f in found if f.action] == actions
    if actions:
        pos, dv, eq = counts
        assert (
            f"{pos} position delete files, {dv} deletion vectors, {eq} equality delete files" in found[0].note
        )


def test_the_summary_gives_each_table_and_the_worst_exit():
    rows = [
        Checked("/wh/db/a", "rewrite needed", 1, 30.0, "local-1"),
        Checked("/wh/db/broken", "broken", 3, 1.2, "local-1"),
        Checked("/wh/db/b", "healthy", 0, 5.1, "local-1"),
    ]
    text = summary(rows).splitlines()
    assert text[0].startswith("summary: 3 tables in one Spark session (local-1)")
    assert text[3].split() == ["/wh/db/broken", "broken", "3", "1.2"]
    assert text[-1] == "exit 3 (the worst table's)"
