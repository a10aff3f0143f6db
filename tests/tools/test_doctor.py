"""`icelab doctor` on real Iceberg tables: the tiny dataset (against manifest_health), tables it
did not create (bucket x day, merge-on-read deletes), --apply and --copy, and bad input."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from icelab.bench.measure import measure
from icelab.bench.profiles import Profile, prepare
from icelab.charts.report import key_ratios
from icelab.core import storage
from icelab.core.config import manifest_health_rules
from icelab.core.runs import read_run
from icelab.experiments import doctor as doctor_experiment
from icelab.experiments import manifest_health
from icelab.tools.doctor import main as doctor_main
from tests.conftest import SHRINK
from tests.warehouses import own_warehouse

REPO = Path(__file__).resolve().parents[2]
CATALOG = "doctor_t"


def main(argv: list[str], measure: bool = False) -> int:
    """`icelab doctor` in this process, with the tests' engine settings: it reuses the tests'
    driver JVM, which refuses a session asking for other JVM settings (driver memory). Unless
    `measure` or the arguments say otherwise, with --measure-plans 0: the tests of the measured
    planning (test_doctor_measured.py) take the default, the others skip four plans a window."""
    skip = [] if measure or any(a.startswith("--measure-plans") for a in argv) else ["--measure-plans", "0"]
    # The tests' settings first: a test's own `--set` (say charts=true) comes after and wins.
    return doctor_main([*(f"--set={o}" for o in SHRINK), *argv, *skip])


def killed(args: list[str], kill_at: str) -> subprocess.CompletedProcess:
    """`icelab doctor ARGS` in a process of its own, killed with SIGKILL at the failpoint
    `kill_at` (`icelab.core.failpoints`), with the tests' engine settings."""
    return subprocess.run(
        [sys.executable, "-m", "icelab", "doctor", *args, *(f"--set={o}" for o in SHRINK)],
        cwd=REPO,
        env={**os.environ, "ICELAB_KILL_AT": kill_at},
        capture_output=True,
        text=True,
        timeout=600,
    )


START = dt.date(2026, 1, 1)


@pytest.fixture(scope="module")
def warehouse(ctx, tmp_path_factory) -> Path:
    """A Hadoop catalog of the tests' own, for tables icelab did not create."""
    return own_warehouse(ctx, tmp_path_factory, "doctor", CATALOG)


def doctor(capsys, results: Path, *args: str, measure: bool = False) -> tuple[int, dict, Path, str]:
    """`icelab doctor ARGS` in this process (its session is the tests'): exit code, report, run dir."""
    code = main([*args, "--results", str(results)], measure)
    captured = capsys.readouterr()
    assert "results: " in captured.out, captured.err[-3000:]
    return outcome(code, captured.out)


def outcome(code: int, out: str) -> tuple[int, dict, Path, str]:
    """A doctor run's exit code, report, run dir and output, from its exit code and output."""
    line = next(x for x in out.splitlines() if x.startswith("results: "))
    run_dir = Path(line.removeprefix("results: ").split(" (charts")[0])
    return code, json.loads((run_dir / "report.json").read_text()), run_dir, out


def snapshot_id(spark, table: str) -> int:
    return spark.sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at DESC LIMIT 1").first()[
        0
    ]


def metadata_files(warehouse: Path, name: str) -> list[str]:
    return sorted(p.name for p in (warehouse / "db" / name / "metadata").iterdir())


@pytest.mark.parametrize(
    ("name", "target", "verdict"),
    [("as_ingested", None, "rewrite needed"), ("rewrite_256kb", 256 * 1024, "healthy")],
)
def test_same_verdict_and_statistics_as_manifest_health(ctx, tiny, results, capsys, name, target, verdict):
    table = prepare(ctx.spark, tiny.dataset, Profile(name, target))
    expected = manifest_health.inspect(ctx.spark, name, table, manifest_health_rules())
    path = storage.local_path(tiny.dataset.iceberg_uri) + ("" if target is None else f"_{name}")
    # With `full` among the windows every partition is judged, as manifest_health judges them
    # (tiny spans 60 days; the default windows, up to 30d, would leave the older ones out).
    windows = [a for w in ("1d", "7d", "30d", "full") for a in ("--window", w)]
    code, report, run_dir, out = doctor(capsys, results, path, *windows, "--set=charts=true")
    state = report["states"][0]
    assert state["unwindowed"] == []
    assert report["table"]["name"] == table  # reached through the dataset's own catalog
    # The rules' verdict is manifest_health's; the doctor's own is healthy where no rewrite is worth
    # it (at tiny, the 256 KB rewrite left one manifest).
    assert (state["rule_verdict"], state["reasons"]) == (expected.verdict, expected.reasons)
    assert state["verdict"] == verdict
    assert set(state["stats"]) == set(expected.stats)
    for key, stats in expected.stats.items():
        assert state["stats"][key] == pytest.approx(stats, rel=1e-12), key
    assert state["manifests"] == len(expected.manifests)
    assert state["manifest_bytes"] == int(expected.manifests.length.sum())
    parts = pd.read_parquet(run_dir / "partitions.parquet")
    mine = parts.set_index("day")[["exact", "bounds"]].sort_index()
    theirs = expected.partitions.set_index("day")[["exact", "bounds"]].sort_index()
    assert mine.index.tolist() == theirs.index.tolist()
    assert (mine.values == theirs.values).all()
    assert code == (0 if verdict == "healthy" else 1)
    assert f"-> {verdict.upper()}" in out
    for chart in ("manifests_per_partition.png", "manifest_sizes.png", "env.json", "config.yaml"):
        assert (run_dir / chart).is_file(), chart
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    # Its model: the committed calibration of this engine and storage, named in the report.
    assert report["planning_model"]["run"].startswith("calibration/local-local-0ms (run ")
    assert "fitted on run calibration/local-local-0ms" in out


def _append(spark, table: str, rows: list[tuple[int, dt.datetime]]) -> None:
    frame = spark.createDataFrame([(i, ts, f"v{i}") for i, ts in rows], "id bigint, ts timestamp, v string")
    frame.writeTo(table).append()


@pytest.fixture(scope="module")
def bucketed(ctx, warehouse) -> tuple[str, list[list[tuple[int, dt.datetime]]]]:
    """A table icelab did not create: bucket(8, id) x days(ts), ten appends, one manifest each."""
    spark, table = ctx.spark, f"{CATALOG}.db.bucketed"
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, v string) USING iceberg "
        "PARTITIONED BY (bucket(8, id), days(ts))"
    )
    days = [dt.datetime.combine(START + dt.timedelta(days=d), dt.time(12)) for d in range(14)]
    appends = [[(i, day) for day in days for i in range(j * 16, j * 16 + 16)] for j in range(8)]
    appends.append([(5, days[d]) for d in (6, 7, 8)])  # one bucket, three days
    appends.append([(1, days[0]), (2, days[13])])  # two buckets, two days: bounds span far more
    for rows in appends:
        _append(spark, table, rows)
    return table, appends


def test_a_bucket_by_day_table_is_counted_for_its_own_spec(ctx, bucketed, warehouse, results, capsys):
    spark, (table, appends) = ctx.spark, bucketed
    code, report, run_dir, _ = doctor(
        capsys, results, str(warehouse / "db" / "bucketed"), "--window", "1d", "--window", "3d"
    )
    assert report["table"]["specs"] == {"0": "bucket(8, id), days(ts)"}
    # What was appended, independently: each append's (bucket, day) pairs, by Iceberg's own bucket function.
    exact, boxes = defaultdict(int), []
    for rows in appends:
        spark.createDataFrame(rows, "id bigint, ts timestamp").createOrReplaceTempView("appended")
        pairs = {
            (r.b, r.d)
            for r in spark.sql(
                f"SELECT {CATALOG}.system.bucket(8, id) AS b, to_date(ts) AS d FROM appended"
            ).collect()
        }
        for pair in pairs:
            exact[pair] += 1
        bs, ds = [p[0] for p in pairs], [p[1] for p in pairs]
        boxes.append((min(bs), max(bs), min(ds), max(ds)))
    expected = {
        f"id_bucket={b}/ts_day={d.isoformat()}": (
            n,
            sum(1 for lb, hb, ld, hd in boxes if lb <= b <= hb and ld <= d <= hd),
        )
        for (b, d), n in exact.items()
    }
    parts = pd.read_parquet(run_dir / "partitions.parquet")
    assert "day" not in parts.columns  # two fields: charted by partition, not by day
    got = {r.label: (r.exact, r.bounds) for r in parts.itertuples()}
    assert got == expected
    assert any(e < b for e, b in expected.values())  # the last append's bounds cover partitions it lacks
    state = report["states"][0]
    assert state["files"]["data_files"] == spark.sql(f"SELECT count(*) FROM {table}.data_files").first()[0]
    # What a time window keeps is what planning scans: a 1d and a 3d window on ts alone.
    for window in state["windows"]:
        start, end = window["start_utc"][:19], window["end_utc"][:19]
        m = measure(
            spark,
            f"SELECT count(*) FROM {table} WHERE ts >= TIMESTAMP '{start}' AND ts < TIMESTAMP '{end}'",
            execute=False,
        )
        assert m.scan["manifests_scanned"] == window["manifests"], window
    advice = state["advice"]
    assert advice["cluster_by"] == ["ts_day", "id_bucket"]  # time first, for time windows
    assert code == 1 and advice["actions"] == ["rewrite_manifests"]
    # The HTML report's section for the run, from its stored files.
    section = key_ratios(read_run(run_dir))
    assert "bucket(8, id), days(ts)" in section and "rewrite_manifests" in section and "Verdicts" in section


def test_copy_applies_on_a_registered_copy_and_leaves_the_table(ctx, bucketed, warehouse, results, capsys):
    spark, (table, _) = ctx.spark, bucketed
    before, files = snapshot_id(spark, table), metadata_files(warehouse, "bucketed")
    # The floor as target: two manifests, where the layout meant is one (a day-first cut shows then).
    code, report, _, out = doctor(
        capsys, results, str(warehouse / "db" / "bucketed"), "--copy", "--keep-copy", "--target", "64KB"
    )
    assert snapshot_id(spark, table) == before and metadata_files(warehouse, "bucketed") == files
    copy = report["copy"]
    # In icelab's own catalog, kept under the results directory (--keep-copy), not beside the table.
    assert copy.endswith(".scratch.bucketed_doctor_copy") and "applied on the copy" in out
    assert (
        report["scratch"]["kept"] and Path(report["scratch"]["directory"]).parent == results / "doctor-copies"
    )
    assert sorted(p.name for p in (warehouse / "db").iterdir() if "bucketed" in p.name) == ["bucketed"]
    assert [a["action"] for a in report["applied"]] == ["set_target", "rewrite_manifests", "restore_target"]
    after = report["states"][1]
    assert after["state"] == "after_apply (copy)"
    assert after["stats"]["bounds"]["max"] <= report["states"][0]["stats"]["bounds"]["max"] / 2
    mans = spark.sql(f"SELECT partition_summaries AS ps FROM {copy}.manifests WHERE content = 0").collect()
    spans = [
        (dt.date.fromisoformat(m.ps[1].upper_bound) - dt.date.fromisoformat(m.ps[1].lower_bound)).days
        for m in mans
    ]
    # Clustered by day first: each manifest holds its share of the 14 days, of every bucket (a cut
    # may fall inside a day, between its buckets); by bucket first, each would span all 14 days.
    assert len(spans) >= 2 and max(spans) <= 14 // len(spans)
    assert code in (0, 1)


@pytest.fixture()
def daily(ctx, warehouse) -> str:
    """Six appends, each over all 20 days: every manifest spans every day (as ingested)."""
    spark, table = ctx.spark, f"{CATALOG}.db.daily"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, v string) USING iceberg PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('commit.manifest-merge.enabled'='false')"
    )
    for j in range(6):
        rows = [
            (j * 100 + d, dt.datetime.combine(START + dt.timedelta(days=d), dt.time(j))) for d in range(20)
        ]
        _append(spark, table, rows)
    return table


def test_dry_run_changes_nothing_and_apply_makes_it_healthy(ctx, daily, warehouse, results, capsys):
    spark, path = ctx.spark, str(warehouse / "db" / "daily")
    before, files = snapshot_id(spark, daily), metadata_files(warehouse, "daily")
    code, report, _, out = doctor(capsys, results, path)
    assert code == 1 and report["verdict"] != "healthy" and "dry run, nothing changed" in out
    assert snapshot_id(spark, daily) == before and metadata_files(warehouse, "daily") == files
    advice = report["states"][0]["advice"]
    target = advice["target_bytes"]
    assert [s["text"] for s in advice["statements"] if s["applies"]] == [
        f"ALTER TABLE {CATALOG}.db.daily SET TBLPROPERTIES ('commit.manifest.target-size-bytes'='{target}')",
        f"CALL {CATALOG}.system.rewrite_manifests(table => 'db.daily')",
        f"ALTER TABLE {CATALOG}.db.daily UNSET TBLPROPERTIES ('commit.manifest.target-size-bytes')",
    ]
    # Six small files a day: compaction is advised for review, never run by --apply.
    assert [s["text"] for s in advice["statements"] if not s["applies"]] == [
        f"CALL {CATALOG}.system.rewrite_data_files(table => 'db.daily')"
    ]

    code, report, _, _ = doctor(capsys, results, path, "--apply")
    assert [a["action"] for a in report["applied"]] == ["set_target", "rewrite_manifests", "restore_target"]
    assert snapshot_id(spark, daily) != before
    assert report["states"][1]["verdict"] == "healthy" and code == 0
    props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {daily}").collect()}
    assert "commit.manifest.target-size-bytes" not in props  # the rewrite's target only, put back

    code, report, _, _ = doctor(capsys, results, path)  # a second visit
    assert code == 0 and report["verdict"] == "healthy" and len(report["states"]) == 1


def test_an_old_metadata_json_is_read_by_path_and_applied_only_on_a_copy(
    ctx, daily, warehouse, results, capsys
):
    spark, meta = ctx.spark, warehouse / "db" / "daily" / "metadata"
    old = meta / "v6.metadata.json"  # after 5 of the 6 appends: read as of that file
    before, files = snapshot_id(spark, daily), metadata_files(warehouse, "daily")
    code, report, _, _ = doctor(capsys, results, str(old))
    state = report["states"][0]
    assert report["table"]["kind"] == "path" and report["table"]["name"] is None
    assert (state["snapshots"]["count"], state["manifests"], state["files"]["data_files"]) == (5, 5, 100)
    assert "read by its metadata file" in " ".join(state["advice"]["notes"]) and code == 1
    code = main([str(old), "--apply", "--results", str(results)])
    _one_line_error(code, capsys.readouterr().err, "nothing can be committed to it: give --copy")
    code, report, _, _ = doctor(capsys, results, str(old), "--copy")
    assert report["copy"].endswith(".scratch.daily_doctor_copy") and report["states"][1]["manifests"] < 5
    assert snapshot_id(spark, daily) == before and metadata_files(warehouse, "daily") == files


# Rules no layout trips, so that only the snapshots decide.
RELAXED = ["--rule", "bounds_p90=1000:1000", "--rule", "bounds_max=1000:1000", "--rule", "span_median=1:1"]


def test_expiry_is_advised_past_the_retention_and_applied(ctx, daily, warehouse, results, capsys):
    spark, path = ctx.spark, str(warehouse / "db" / "daily")
    keep = ["--retain", "0s", "--retain-last", "2", *RELAXED]
    code, report, _, _ = doctor(capsys, results, path, *keep)
    snaps = report["states"][0]["snapshots"]
    assert code == 1 and report["actions"] == ["expire_snapshots"]
    assert (snaps["count"], snaps["expirable"]) == (6, 4)  # all older than 0s; the newest 2 kept
    (expire,) = [s for s in report["states"][0]["advice"]["statements"] if s["applies"]]
    assert expire["text"] == (
        f"CALL {CATALOG}.system.expire_snapshots(table => 'db.daily', "
        f"older_than => TIMESTAMP '{snaps['cutoff_utc']}', retain_last => 2)"
    )
    code, report, _, _ = doctor(capsys, results, path, "--apply", *keep)
    assert [a["action"] for a in report["applied"]] == ["expire_snapshots"]
    assert code == 0 and report["states"][1]["snapshots"]["count"] == 2
    assert spark.sql(f"SELECT count(*) FROM {daily}").first()[0] == 120  # data untouched


def test_merge_on_read_delete_files_are_counted(ctx, warehouse, compose_run, results, capsys):
    spark, table = ctx.spark, f"{CATALOG}.db.mor"
    spark.sql(
        f"CREATE TABLE {table} (id bigint, ts timestamp, v string) USING iceberg PARTITIONED BY (days(ts)) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    _append(
        spark,
        table,
        [(i, dt.datetime.combine(START + dt.timedelta(days=i % 3), dt.time(1))) for i in range(90)],
    )
    spark.sql(f"DELETE FROM {table} WHERE id < 20")
    # Through the experiment, as `python run.py experiment=doctor table=...` runs it.
    cfg = compose_run(
        "experiment=doctor", f"table='{warehouse / 'db' / 'mor'}'", f"paths.results_dir={results}"
    )
    outcome = doctor_experiment.run(cfg)
    capsys.readouterr()
    state = json.loads((outcome.run_dir / "report.json").read_text())["states"][0]
    deletes = spark.sql(
        f"SELECT count(*) AS n, sum(record_count) AS rows, count_if(content = 1) AS pos "
        f"FROM {table}.delete_files"
    ).first()
    delete_manifests = spark.sql(f"SELECT count(*) FROM {table}.manifests WHERE content = 1").first()[0]
    assert deletes.n > 0 and state["deletes"]["delete_files"] == deletes.n
    assert state["deletes"]["delete_records"] == deletes.rows == 20
    assert state["deletes"]["position_delete_files"] == deletes.pos
    assert state["deletes"]["delete_manifests"] == delete_manifests
    assert state["files"]["data_files"] == spark.sql(f"SELECT count(*) FROM {table}.data_files").first()[0]
    assert any("delete files:" in n for n in state["advice"]["notes"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line_error(code: int, err: str, words: str) -> None:
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("icelab: error: ") and words in lines[0] and "Traceback" not in err


def test_bad_input_is_one_line_and_exit_2(ctx, tmp_path, results, capsys):
    # An unknown path, through the real command in a child process (no JVM starts: checked first).
    proc = subprocess.run(
        [sys.executable, "-m", "icelab", "doctor", str(tmp_path / "nowhere")],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    _one_line_error(proc.returncode, proc.stderr, "the path does not exist")
    # A plain Parquet directory.
    plain = tmp_path / "events"
    ctx.spark.range(3).write.parquet(str(plain))
    code = main([str(plain), "--results", str(results)])
    _one_line_error(code, capsys.readouterr().err, "is not an Iceberg table")
    # Catalogs nobody answers (a loopback port nothing listens on).
    port = _free_port()
    for catalog, uri in (("rest", f"http://127.0.0.1:{port}"), ("hive", f"thrift://127.0.0.1:{port}")):
        code = main(["db.t", "--catalog", catalog, "--uri", uri, "--results", str(results)])
        _one_line_error(code, capsys.readouterr().err, f"cannot reach the {catalog} catalog at {uri}")
    # An unknown table in a catalog that exists.
    code = main(["db.missing", "--warehouse", str(tmp_path), "--results", str(results)])
    _one_line_error(code, capsys.readouterr().err, "unknown table 'db.missing'")
    assert not (results / "runs" / "doctor").exists() or all(
        (d / "report.json").is_file() for d in (results / "runs" / "doctor").iterdir()
    )  # bad input opens no run
