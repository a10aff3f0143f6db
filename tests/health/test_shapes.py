"""`icelab doctor` on table shapes plain Spark SQL wrote (icelab/datagen/spark_sql_shapes.py): a broken table
(a manifest deleted, a metadata.json cut short) is its own outcome; merge-on-read position
deletes and format v3 deletion vectors are counted as what they are, with their advice; orphaned
metadata is reported with its bytes; several tables are checked in one run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from icelab.core import storage
from icelab.core.session import register_iceberg_catalog
from icelab.datagen import spark_sql_shapes
from icelab.tools.doctor import main as doctor_main
from tests.conftest import SHRINK
from tests.warehouses import own_warehouse

REPO = Path(__file__).resolve().parents[2]
CATALOG = "shapes_t"
EXIT_BROKEN = 3


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    """A Hadoop catalog of the tests' own, for tables icelab did not create."""
    return own_warehouse(ctx, tmp_path_factory, "shapes", CATALOG)


def doctor(capsys, results: Path, *args: str) -> tuple[int, str, str]:
    """`icelab doctor ARGS` in this process (its session is the tests'): exit code, stdout, stderr;
    no planning measured (tests/tools/test_doctor_measured.py tests it)."""
    code = doctor_main(
        [*args, "--measure-plans", "0", "--results", str(results), *(f"--set={o}" for o in SHRINK)]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def report_of(out: str) -> dict:
    line = next(x for x in out.splitlines() if x.startswith("results: "))
    run_dir = Path(line.removeprefix("results: ").split(" (charts")[0])
    return json.loads((run_dir / "report.json").read_text())


def runs(results: Path) -> list[str]:
    found = results / "runs" / "doctor"
    return sorted(p.name for p in found.iterdir()) if found.is_dir() else []


def assert_broken(code: int, out: str, err: str, file: str) -> None:
    """Exit 3 and one line on stderr naming the file, no traceback, no report."""
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == EXIT_BROKEN, err
    assert len(lines) == 1 and lines[0].startswith("icelab: broken table "), err
    assert file in lines[0] and "Traceback" not in err and "results: " not in out


def test_a_table_missing_a_manifest_is_broken_and_left_untouched(ctx, warehouse, results, capsys):
    path, gone = spark_sql_shapes.missing_manifest(ctx.spark, CATALOG, warehouse, "missing")
    before, run_dirs = spark_sql_shapes.metadata_listing(warehouse, "missing"), runs(results)
    code, out, err = doctor(capsys, results, str(path))
    assert_broken(code, out, err, gone)
    assert "manifest " in err and "is missing" in err
    # Asked to apply, it stops at the same place: nothing written to the table, no run opened.
    code, out, err = doctor(capsys, results, str(path), "--apply")
    assert_broken(code, out, err, gone)
    assert spark_sql_shapes.metadata_listing(warehouse, "missing") == before and runs(results) == run_dirs


@pytest.mark.parametrize(
    ("keep_checksum", "words"), [(True, "fails its checksum"), (False, "not valid JSON")]
)
def test_a_cut_metadata_json_is_broken(ctx, warehouse, results, capsys, keep_checksum, words):
    name = f"cut_{'crc' if keep_checksum else 'json'}"
    path, current = spark_sql_shapes.corrupt_metadata(ctx.spark, CATALOG, warehouse, name, keep_checksum)
    before = spark_sql_shapes.metadata_listing(warehouse, name)
    code, out, err = doctor(capsys, results, str(path))
    assert_broken(code, out, err, current)
    assert "metadata file" in err and words in err
    assert spark_sql_shapes.metadata_listing(warehouse, name) == before


def test_a_cut_manifest_is_broken_and_named_by_the_entries_pass(ctx, warehouse, results, capsys):
    # Present (so the listing finds it) but cut short: the entries pass, in the driver's JVM,
    # is the first to read it, and names it.
    where = spark_sql_shapes.fragmented(ctx.spark, CATALOG, warehouse, "cut_manifest")
    manifest = spark_sql_shapes.local(spark_sql_shapes.manifests_of(ctx.spark, CATALOG, "cut_manifest")[0])
    manifest.write_bytes(manifest.read_bytes()[: manifest.stat().st_size // 2])
    manifest.with_name(f".{manifest.name}.crc").unlink(missing_ok=True)
    code, out, err = doctor(capsys, results, str(where))
    assert_broken(code, out, err, manifest.name)
    assert "manifest " in err and ("is cut short" in err or "not a readable Avro file" in err), err


def delete_counts(spark, table: str) -> dict[str, int]:
    """Delete files by kind, from Iceberg's own delete_files table."""
    row = spark.sql(
        "SELECT count_if(content = 1 AND upper(file_format) != 'PUFFIN') AS pos, "
        "count_if(content = 1 AND upper(file_format) = 'PUFFIN') AS dv, count_if(content = 2) AS eq, "
        f"sum(record_count) AS rows FROM {table}.delete_files"
    ).first()
    manifests = spark.sql(f"SELECT count(*) FROM {table}.manifests WHERE content = 1").first()[0]
    return {"pos": row.pos, "dv": row.dv, "eq": row.eq, "rows": row.rows, "manifests": manifests}


def statements(state: dict) -> dict[str, dict]:
    return {s["action"]: s for s in state["advice"]["statements"]}


def test_merge_on_read_position_deletes_are_counted_and_advised(ctx, warehouse, results, capsys):
    path = spark_sql_shapes.merge_on_read(ctx.spark, CATALOG, warehouse, "mor_v2")
    expected = delete_counts(ctx.spark, f"{CATALOG}.db.mor_v2")
    code, out, _ = doctor(capsys, results, str(path), "--window", "1d")
    state = report_of(out)["states"][0]
    deletes = state["deletes"]
    assert expected["pos"] > 0 and expected["dv"] == 0
    assert (deletes["position_delete_files"], deletes["deletion_vectors"]) == (expected["pos"], 0)
    assert (deletes["delete_records"], deletes["delete_manifests"]) == (
        expected["rows"],
        expected["manifests"],
    )
    # Planning a window opens the delete manifests that meet it (each covers every day here).
    (window,) = state["windows"]
    assert window["delete_manifests"] == expected["manifests"] and window["delete_manifest_bytes"] > 0
    advised = statements(state)
    rewrite = advised["rewrite_position_deletes"]
    assert rewrite["text"] == f"CALL {CATALOG}.system.rewrite_position_delete_files(table => 'db.mor_v2')"
    assert not rewrite["applies"] and not advised["rewrite_deletes"]["applies"]
    assert "delete-file-threshold" in advised["rewrite_deletes"]["text"]
    assert f"{expected['pos']} position delete files, 0 deletion vectors" in out


def test_v3_deletion_vectors_are_counted_as_such(ctx, warehouse, results, capsys):
    path = spark_sql_shapes.merge_on_read(ctx.spark, CATALOG, warehouse, "mor_v3", format_version=3)
    expected = delete_counts(ctx.spark, f"{CATALOG}.db.mor_v3")
    code, out, _ = doctor(capsys, results, str(path))
    report = report_of(out)
    state = report["states"][0]
    assert report["table"]["format_version"] == 3
    assert expected["dv"] > 0 and expected["pos"] == 0  # Iceberg 1.10 writes deletion vectors at v3
    assert (state["deletes"]["deletion_vectors"], state["deletes"]["position_delete_files"]) == (
        expected["dv"],
        0,
    )
    assert state["deletes"]["delete_records"] == expected["rows"]
    advised = statements(state)
    # A writer keeps one vector per data file: nothing for rewrite_position_delete_files to merge.
    assert "rewrite_position_deletes" not in advised and "rewrite_deletes" in advised
    assert f"0 position delete files, {expected['dv']} deletion vectors" in out


def test_orphaned_manifests_after_an_expiry_are_reported_with_their_bytes(ctx, warehouse, results, capsys):
    spark = ctx.spark
    path = spark_sql_shapes.expired_keeping_files(spark, CATALOG, warehouse, "orphans")
    table = f"{CATALOG}.db.orphans"
    referenced = {Path(r.path).name for r in spark.sql(f"SELECT path FROM {table}.all_manifests").collect()}
    referenced |= {
        Path(r[0]).name for r in spark.sql(f"SELECT manifest_list FROM {table}.snapshots").collect()
    }
    avro = {p.name: p.stat().st_size for p in (path / "metadata").glob("*.avro")}
    orphans = {n: size for n, size in avro.items() if n not in referenced}
    assert len(orphans) >= 6  # the six appends' manifests and manifest lists, and the rewrite's list
    code, out, _ = doctor(capsys, results, str(path))
    found = report_of(out)["states"][0]["orphans"]
    lists = {n: s for n, s in orphans.items() if n.startswith("snap-")}
    assert (found["files"], found["bytes"]) == (len(orphans), sum(orphans.values()))
    assert (found["manifest_lists"], found["manifest_list_bytes"]) == (len(lists), sum(lists.values()))
    assert found["older_than_default"] == 0  # written seconds ago: the default older_than spares them
    remove = statements(report_of(out)["states"][0])["remove_orphans"]
    assert remove["text"] == f"CALL {CATALOG}.system.remove_orphan_files(table => 'db.orphans')"
    assert not remove["applies"] and "older_than" in out


def test_several_tables_in_one_session_with_a_summary_and_the_worst_exit(ctx, warehouse, tmp_path):
    spark = ctx.spark
    tables = [
        spark_sql_shapes.fragmented(spark, CATALOG, warehouse, "several_a"),
        spark_sql_shapes.one_append(spark, CATALOG, warehouse, "several_b"),
        spark_sql_shapes.missing_manifest(spark, CATALOG, warehouse, "several_broken")[0],
    ]
    # The real command in a process of its own: one JVM, started once.
    proc = subprocess.run(
        [sys.executable, "-m", "icelab", "doctor", *map(str, tables), "--results", str(tmp_path)]
        + [f"--set={o}" for o in SHRINK],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = proc.stdout
    assert proc.returncode == EXIT_BROKEN, proc.stderr[-2000:]
    summary = out[out.index("summary: 3 tables in one Spark session (") :].splitlines()
    rows = {line.split()[0]: line.split() for line in summary[2:5]}
    assert set(rows) == {str(t) for t in tables}
    assert rows[str(tables[2])][1:3] == ["broken", "3"]
    assert all(rows[str(t)][-2] in ("0", "1") for t in tables[:2])
    assert summary[5] == "exit 3 (the worst table's)"
    assert len(runs(tmp_path)) == 2  # a run directory per table checked, none for the broken one


def test_a_namespace_is_every_table_in_it(ctx, results, capsys, tmp_path_factory):
    spark, warehouse = ctx.spark, tmp_path_factory.mktemp("namespace-warehouse")
    register_iceberg_catalog(spark, "shapes_ns", storage.to_uri(str(warehouse)), ctx.engine)
    spark_sql_shapes.fragmented(spark, "shapes_ns", warehouse, "first", appends=3)
    spark_sql_shapes.one_append(spark, "shapes_ns", warehouse, "second")
    code, out, err = doctor(capsys, results, "--namespace", "db", "--warehouse", str(warehouse))
    summary = out[out.index("summary: 2 tables in one Spark session") :].splitlines()
    rows = {line.split()[0]: int(line.split()[-2]) for line in summary[2:4]}
    assert set(rows) == {"db.first", "db.second"} and code == max(rows.values()), err
    code, _, err = doctor(capsys, results, "--namespace", "nowhere", "--warehouse", str(warehouse))
    assert code == 2 and err.startswith("icelab: error: ") and len(err.strip().splitlines()) == 1, err


def test_a_namespace_of_edge_cases_reports_every_table(ctx, results, capsys, tmp_path_factory):
    """A table created and never written is healthy with nothing to do (no chart to draw, no
    crash); a broken one is one line and exit 3; neither loses the other tables' reports."""
    spark, warehouse = ctx.spark, tmp_path_factory.mktemp("edge-warehouse")
    register_iceberg_catalog(spark, "shapes_edge", storage.to_uri(str(warehouse)), ctx.engine)
    spark_sql_shapes.create(spark, "shapes_edge", "empty")
    spark_sql_shapes.one_append(spark, "shapes_edge", warehouse, "written")
    spark_sql_shapes.missing_manifest(spark, "shapes_edge", warehouse, "broken")
    # The tests' settings first, then charts on: the empty table's chart crashed the run once.
    settings = [*(f"--set={o}" for o in SHRINK), "--set=charts=true"]
    args = [
        "--namespace",
        "db",
        "--warehouse",
        str(warehouse),
        "--measure-plans",
        "0",
        "--results",
        str(results),
    ]
    code = doctor_main([*args, *settings])
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    summary = out[out.index("summary: 3 tables in one Spark session") :].splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in summary[2:5]}
    assert set(rows) == {"db.empty", "db.written", "db.broken"}, summary
    assert rows["db.empty"][:2] == ["healthy", "0"] and rows["db.broken"][:2] == ["broken", "3"], rows
    assert code == EXIT_BROKEN and "Traceback" not in err and "ValueError" not in err, err
    empty = next(part for part in out.split("icelab doctor: ")[1:] if ".db.empty " in part.splitlines()[0])
    assert "why: empty: no data file and no data manifest, nothing to do" in empty
    assert "(charts: none (nothing to chart))" in empty and "nothing to do: healthy" in empty
