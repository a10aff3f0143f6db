"""The doctor while another writer commits (issue 73): every figure of a report is read at the one
snapshot it names, and after `--apply` the other writers' commits are named and the rewrite is
judged on its own commit. The writer is a thread of this process appending through Spark SQL;
a stall failpoint (`ICELAB_STALL_AT`) holds the doctor where a commit would slip in between
two reads, or between the first read and the rewrite."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from icelab.datagen.spark_sql_shapes import append, fragmented
from tests.tools.test_doctor import doctor, snapshot_id
from tests.tools.test_doctor_journal import properties
from tests.warehouses import own_warehouse

CATALOG = "concurrent_t"


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    return own_warehouse(ctx, tmp_path_factory, "concurrent", CATALOG)


class Writer:
    """A thread appending 5 rows a commit to `table` until stopped; what it committed."""

    def __init__(self, spark, table: str) -> None:
        self.spark, self.table = spark, table
        self.stop, self.commits, self.error = threading.Event(), 0, None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                append(self.spark, self.table, 1_000_000 + self.commits * 5, 5, 5)
                self.commits += 1
                time.sleep(0.05)
        except Exception as exc:  # noqa: BLE001 (re-raised by the test)
            self.error = exc


@pytest.fixture
def writing(ctx) -> Iterator:
    started: list[Writer] = []

    def start(table: str) -> Writer:
        w = Writer(ctx.spark, table)
        started.append(w)
        w.thread.start()
        while w.commits < 1 and w.error is None:  # its first commit: the writer runs
            time.sleep(0.05)
        return w

    yield start
    for w in started:
        w.stop.set()
        w.thread.join(timeout=120)


def _ids(spark, table: str) -> list[int]:
    """The snapshot ids of the current snapshot's history, oldest first."""
    rows = spark.sql(f"SELECT snapshot_id, parent_id FROM {table}.snapshots").collect()
    parent = {r.snapshot_id: r.parent_id for r in rows}
    current = snapshot_id(spark, table)
    out = []
    while current is not None:
        out.append(current)
        current = parent.get(current)
    return out[::-1]


def test_one_report_reads_one_snapshot_while_a_writer_commits(
    ctx, warehouse, results, capsys, writing, monkeypatch
):
    spark, table = ctx.spark, f"{CATALOG}.db.read_pinned"
    where = fragmented(spark, CATALOG, warehouse, "read_pinned", appends=6, days=5)
    monkeypatch.setenv("ICELAB_STALL_AT", "doctor.read+3")  # after the pin, before the first read
    writer = writing(table)
    _, report, _, out = doctor(capsys, results, str(where), "--measure-plans", "3")
    writer.stop.set()
    writer.thread.join(timeout=120)
    assert writer.error is None, writer.error
    state = report["states"][0]
    pinned = state["snapshot_id"]
    # The writer committed after the pin: a read of the current snapshot would count its files.
    later = _ids(spark, table)
    assert later.index(pinned) < len(later) - 1
    files = spark.sql(f"SELECT count(*) FROM {table}.files VERSION AS OF {pinned}").first()[0]
    manifests = spark.sql(f"SELECT count(*) FROM {table}.manifests VERSION AS OF {pinned}").first()[0]
    assert state["files"]["data_files"] == files
    assert report["reader"]["manifests"] == manifests
    assert report["table"]["current_snapshot_id"] == pinned
    assert {w["measured_snapshot_id"] for w in state["windows"] if w.get("measured_ms") is not None} == {
        pinned
    }
    assert f"snapshot {pinned}" in out


def test_apply_names_the_other_writers_commits_and_judges_its_own(
    ctx, warehouse, results, capsys, writing, monkeypatch
):
    spark, table = ctx.spark, f"{CATALOG}.db.applied"
    where = fragmented(spark, CATALOG, warehouse, "applied", appends=6, days=5)
    before = properties(spark, table)
    rows = spark.sql(f"SELECT count(*) FROM {table}").first()[0]
    monkeypatch.setenv("ICELAB_STALL_AT", "doctor.statement:2+3")  # before the rewrite
    writer = writing(table)
    code, report, _, out = doctor(capsys, results, str(where), "--apply")
    writer.stop.set()
    writer.thread.join(timeout=120)
    assert writer.error is None, writer.error
    commits = report["commits"]
    first, *rest = report["states"]
    ours = commits["rewrite"]
    assert ours is not None, out
    history = _ids(spark, table)
    # Named: every commit between the first read and the rewrite, and none of them is the doctor's.
    at, mine = history.index(first["snapshot_id"]), history.index(ours["snapshot_id"])
    assert [c["snapshot_id"] for c in commits["others_before_rewrite"]] == history[at + 1 : mine]
    assert commits["others_before_rewrite"] and {
        c["operation"] for c in commits["others_before_rewrite"]
    } == {"append"}
    assert [c["snapshot_id"] for c in commits["others_after_rewrite"]] == history[
        mine + 1 : mine + 1 + len(commits["others_after_rewrite"])
    ]
    # Judged on its own commit: the state before is the rewrite's parent, the state after the rewrite.
    parent, after = rest
    assert (parent["state"], parent["snapshot_id"]) == ("before_rewrite", ours["parent_id"])
    assert after["snapshot_id"] == ours["snapshot_id"]
    for row, w in zip(report["before_after"], parent["windows"], strict=True):
        assert row["before_manifests"] == w["manifests"]
    assert "by other writers while --apply ran" in out and str(ours["snapshot_id"]) in out
    # Nothing lost, nothing left changed.
    assert spark.sql(f"SELECT count(*) FROM {table}").first()[0] == rows + 5 * writer.commits
    assert properties(spark, table) == before
    assert code in (0, 1)
