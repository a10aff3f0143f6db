"""Metadata-scale states (icelab.datagen.metadata): the layout arithmetic on every configured
size, and a real micro state (3,000 entries) built through the Java builder, read by Spark and
by DuckDB's Iceberg reader, measured, and built again from the same seed."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import signal
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import psutil
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, MapType, StructType

from icelab.core import failpoints, run_state
from icelab.core.config.metadata import meta_configs, metadata_scale_config
from icelab.core.contract import OUT_OF_MEMORY, TIMED_OUT, validate
from icelab.core.errors import UserError
from icelab.datagen.metadata import layout
from icelab.datagen.metadata.java import run_builder
from icelab.datagen.metadata.state import AS_INGESTED, MetaState
from icelab.datagen.verify import duckdb_connection
from tests import jvm_archive
from tests.conftest import FAST_JVM, run_py, start_run_py

MICRO = [
    "experiment=metadata_scale",
    "meta=[meta_micro]",
    f"experiment.builder_java_options='{jvm_archive.BASE_FLAGS}'",  # C1 only: seconds of work
]
# Bytes per entry of the states built here (about 725); the layout checks below hold from 600 to 850.
ENTRY_BYTES = 725


def clustered_manifest_days(counts: np.ndarray, target: int, entry_bytes: float) -> list[set[int]]:
    """The days each manifest of a rewrite holds, cut as MetaBuilder cuts (ranges, then every
    `per_manifest` entries of a range)."""
    per_day = counts.sum(axis=0)
    starts, per_manifest = layout.clustered_plan(per_day, entry_bytes, target)
    day_of = np.repeat(np.arange(len(per_day)), per_day)
    bounds = [*(int(per_day[:s].sum()) for s in starts), int(per_day.sum())]
    manifests = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        for a in range(lo, hi, per_manifest):
            manifests.append(set(day_of[a : min(hi, a + per_manifest)].tolist()))
    return manifests


@pytest.mark.parametrize("size", ["meta_200k", "meta_1m", "meta_10m"])
def test_every_size_keeps_the_studys_layouts(compose_cfg, size: str) -> None:
    """As ingested every manifest spans at least 90% of the days, so a 1-day window reads at least
    90% of them; the 1-to-2-days rewrite of each size reads at most 2 for any day."""
    cfg = compose_cfg(*MICRO[:1], f"meta=[{size}]")
    spec, exp = meta_configs(cfg)[size], metadata_scale_config(cfg)
    counts = layout.file_counts(
        spec.data_files,
        spec.manifests,
        spec.days,
        42,
        exp.late_fraction,
        exp.late_max_days,
        exp.clock_skew_fraction,
        exp.touch,
    )
    assert counts.shape == (spec.manifests, spec.days) and counts.sum() == spec.data_files
    assert layout.manifest_days(counts).min() >= 0.9 * spec.days
    for day in range(spec.days):
        assert (counts[:, day] > 0).mean() >= 0.9
    one_to_two = {"meta_200k": "rewrite_1mb", "meta_1m": "rewrite_8mb", "meta_10m": "rewrite_64mb"}[size]
    from icelab.core.config import parse_size

    for entry_bytes in (600, ENTRY_BYTES, 850):
        manifests = clustered_manifest_days(counts, parse_size(spec.rewrites[one_to_two]), entry_bytes)
        per_day = [sum(day in m for m in manifests) for day in range(spec.days)]
        assert max(per_day) <= 2, (entry_bytes, max(per_day))
        assert np.median([len(m) for m in manifests]) <= 2


def test_only_the_measured_layouts_are_measured_every_layout_is_built(compose_cfg, tmp_path: Path) -> None:
    """meta.<size>.measured_layouts (meta_10m_target: its rewrite, not the as-ingested layout of
    minutes a plan): Iceberg variants of those layouts alone, in every mode, while the state still
    builds every layout; a name that is not a layout of the state is refused."""
    from icelab.experiments.metadata_scale import meta_variants

    cfg = compose_cfg(*MICRO[:2], "meta.meta_micro.measured_layouts=[rewrite_64kb]")
    size, exp = meta_configs(cfg)["meta_micro"], metadata_scale_config(cfg)
    state = MetaState("meta_micro", size, exp, None, exp.seed, "0" * 12, tmp_path)  # type: ignore[arg-type]
    variants = [v.label for v in meta_variants(state) if v.format == "iceberg"]
    assert variants == [f"iceberg/rewrite_64kb/{mode}" for mode in size.modes]
    assert state.layouts == [AS_INGESTED, "rewrite_64kb"]
    with pytest.raises(UserError, match="measured_layouts"):
        meta_configs(compose_cfg(*MICRO[:2], "meta.meta_micro.measured_layouts=[rewrite_1mb]"))


def test_range_starts_never_split_a_day() -> None:
    per_day = np.array([10, 1, 1, 30, 5, 5, 5, 5])
    starts = layout.range_starts(per_day, 4)
    assert starts[0] == 0 and starts == sorted(set(starts))
    # 62 entries in 4 ranges of 15.5: a day goes where its middle entry falls (5, 10.5, 11.5,
    # 27, 44.5, 49.5, ...): [0,1,2], [3] (30 entries, whole), [4], [5,6,7]
    assert starts == [0, 3, 4, 5]


def test_counts_are_deterministic_for_a_seed() -> None:
    a = layout.file_counts(20_000, 20, 30, seed=7)
    assert np.array_equal(a, layout.file_counts(20_000, 20, 30, seed=7))
    assert not np.array_equal(a, layout.file_counts(20_000, 20, 30, seed=8))


@pytest.mark.spark  # starts a JVM (and javac once per builder source)
def test_the_builder_jvm_gets_its_java_options(compose_cfg) -> None:
    cfg = compose_cfg(*MICRO)
    with pytest.raises(UserError, match="Could not create the Java Virtual Machine"):
        run_builder({}, 0, cfg.engine.iceberg_jar, "64m", "flags", False, "-XX:+IcelabNoSuchFlag")


def test_too_few_files_for_the_layout_is_one_line(compose_cfg) -> None:
    cfg = compose_cfg(*MICRO, "meta.meta_micro.data_files=100")
    with pytest.raises(UserError, match="at least manifests x days files"):
        meta_configs(cfg)


# --- a real micro state ---------------------------------------------------------------------


def run_here(cfg) -> Path:  # noqa: ANN001
    """metadata_scale run in this process's session (the caller's `ctx`): its run directory."""
    from icelab.experiments import metadata_scale

    return Path(metadata_scale.run(cfg))


@pytest.fixture(scope="module")
def micro_run(compose_run, ctx, tiny):  # noqa: ANN001, ANN201
    """metadata_scale on meta_micro, in this process's session: (cfg, run directory, state)."""
    cfg = compose_run(*MICRO, "experiment.model_inputs=true")
    run_dir = run_here(cfg)
    size = meta_configs(cfg)["meta_micro"]
    state = MetaState.of("meta_micro", size, metadata_scale_config(cfg), tiny.dataset, cfg.paths.data_dir)
    return cfg, run_dir, state


def leaves(dtype, inside: bool = False) -> list[bool]:  # noqa: ANN001
    """One flag per primitive leaf of a Spark type: whether it lies inside a list or map."""
    if isinstance(dtype, StructType):
        return [x for f in dtype.fields for x in leaves(f.dataType, inside)]
    if isinstance(dtype, ArrayType):
        return leaves(dtype.elementType, True)
    if isinstance(dtype, MapType):
        return leaves(dtype.keyType, True) + leaves(dtype.valueType, True)
    return [inside]


def test_entries_per_manifest_and_day_are_the_plan(ctx, micro_run) -> None:
    _, _, state = micro_run
    counts = state.counts()
    entries = (
        ctx.spark.sql(
            f"SELECT data_file.partition.timestamp_day AS day FROM {state.table(AS_INGESTED)}.entries"
        )
        .withColumn("manifest", F.regexp_extract(F.input_file_name(), r"meta-c(\d+)-m0", 1).cast("int"))
        .groupBy("manifest", "day")
        .count()
        .toPandas()
    )
    found = np.zeros_like(counts)
    first = state.first_day
    for rec in entries.itertuples():
        found[rec.manifest, (rec.day - first).days] = rec.count
    assert np.array_equal(found, counts)
    # The rewrite holds the same files, clustered: each manifest 1 or 2 days at 64KB here.
    rewritten = ctx.spark.sql(
        f"SELECT file_path FROM {state.table('rewrite_64kb')}.files ORDER BY file_path"
    ).toPandas()
    ingested = ctx.spark.sql(
        f"SELECT file_path FROM {state.table(AS_INGESTED)}.files ORDER BY file_path"
    ).toPandas()
    strip = lambda s: s.str.replace(r".*/data/", "", regex=True)  # noqa: E731
    assert strip(rewritten["file_path"]).tolist() == strip(ingested["file_path"]).tolist()


def test_every_leaf_has_the_metrics_iceberg_writes(ctx, micro_run) -> None:
    _, _, state = micro_run
    schema = ctx.spark.table(state.table(AS_INGESTED)).schema
    flags = leaves(schema)
    outside = flags.count(False)
    files = ctx.spark.sql(
        f"SELECT partition.timestamp_day AS day, size(column_sizes) AS sizes, size(value_counts) AS values, "
        f"size(null_value_counts) AS nulls, size(lower_bounds) AS lower, size(upper_bounds) AS upper, "
        f"readable_metrics.timestamp.lower_bound AS ts_lo, readable_metrics.timestamp.upper_bound AS ts_hi "
        f"FROM {state.table(AS_INGESTED)}.files"
    ).toPandas()
    assert len(files) == state.size.data_files
    assert (files["sizes"] == len(flags)).all(), "a column size per leaf"
    assert (files["values"] == outside).all() and (files["nulls"] == outside).all()
    # Bounds exist for the leaves outside lists and maps that hold a value in that file (a column
    # all null in a small file has none), as Iceberg writes them.
    assert files["lower"].between(1, outside).all() and files["lower"].max() == outside
    assert (files["lower"] == files["upper"]).all()
    # The timestamp bounds lie inside the entry's own day partition.
    # (Spark returns them naive, in the session's zone: UTC.)
    day_start = pd.to_datetime(files["day"])
    lo, hi = pd.to_datetime(files["ts_lo"]), pd.to_datetime(files["ts_hi"])
    assert (lo >= day_start).all() and (hi < day_start + pd.Timedelta(days=1)).all() and (lo < hi).all()


def test_entry_size_is_a_real_entrys(micro_run) -> None:
    """Within 20% of what Iceberg wrote for the real medium dataset (25,455,067 bytes of manifests
    for 35,913 entries: results/reference/manifest_health)."""
    _, run_dir, _ = micro_run
    states = pd.read_csv(run_dir / "states.csv")
    ingested = states[states["profile"] == AS_INGESTED].iloc[0]
    assert abs(ingested["entry_bytes"] / (25_455_067 / 35_913) - 1) < 0.20


def test_duckdb_reads_the_tables(micro_run) -> None:
    _, _, state = micro_run
    con = duckdb_connection(memory_limit="1GB")
    for name in state.layouts:
        where = state.table_path(name)
        entries, manifests = con.execute(
            f"SELECT count(*), count(DISTINCT manifest_path) FROM iceberg_metadata('{where}')"
        ).fetchone()
        snapshots = con.execute(f"SELECT count(*) FROM iceberg_snapshots('{where}')").fetchone()[0]
        assert entries == state.size.data_files
        expected = state.size.manifests if name == AS_INGESTED else None
        if expected is not None:
            assert (
                manifests == expected and snapshots == state.size.manifests / state.size.manifests_per_commit
            )
        else:
            assert snapshots == 1
    con.close()


def spark_name(seed: int, commit: int, day: int, k: int) -> str:
    """The name MetaBuilder gives entry (commit, day, k)'s placeholder: Spark's for a file it writes."""
    entry = uuid.UUID(int=(seed << 64) | (commit << 40) | (day << 24) | k)
    return f"part-{k % 100_000:05d}-{entry}.c000.zstd.parquet"


def test_parquet_placeholders_mirror_the_entries(ctx, micro_run) -> None:
    """A day's folder holds a placeholder per entry of that day, named as Spark names its files,
    each sparse, of the entry's size, with the hidden checksum file Hadoop's local file system
    writes beside a file (its real size: 8 bytes, then 4 per 512), as in the tiny dataset's tree."""
    _, _, state = micro_run
    per_day = state.counts().sum(axis=0)
    for day in range(state.size.days):
        folder = state.parquet_path / f"date={state.first_day + dt.timedelta(days=day)}"
        names = {p.name for p in folder.iterdir()}
        files = {n for n in names if not n.startswith(".")}
        assert len(files) == per_day[day] and names - files == {f".{n}.crc" for n in files}
    sizes = ctx.spark.sql(
        f"SELECT file_path, file_size_in_bytes FROM {state.table(AS_INGESTED)}.files"
    ).toPandas()
    name = sizes["file_path"].str.extract(r"timestamp_day=([\d-]+)/c(\d+)-(\d+)\.parquet")
    sample = sizes.assign(day=name[0], c=name[1].astype(int), k=name[2].astype(int)).head(50)
    for rec in sample.itertuples():
        day = (dt.date.fromisoformat(rec.day) - state.first_day).days
        placeholder = state.parquet_path / f"date={rec.day}" / spark_name(state.seed, rec.c, day, rec.k)
        crc = placeholder.with_name(f".{placeholder.name}.crc")
        assert placeholder.stat().st_size == rec.file_size_in_bytes
        assert crc.stat().st_size == 8 + 4 * -(-rec.file_size_in_bytes // 512)
        assert placeholder.stat().st_blocks == crc.stat().st_blocks == 0, "sparse: no data written"
    # The tiny dataset's tree, written by Spark, has the same shape of names.
    tree = Path(urlparse(state.template.parquet_uri).path)
    written = next(tree.glob("*/part-*.parquet")).name
    spark_style = r"part-\d{5}-[0-9a-f-]{36}\.c000\.zstd\.parquet"
    assert re.fullmatch(spark_style, written) and re.fullmatch(spark_style, placeholder.name), written


def test_planning_reads_what_the_manifest_ranges_say(micro_run) -> None:
    """Iceberg's own scan report agrees with windows.csv (manifests whose day range meets the
    window), and the Parquet side lists the same files; nothing executed."""
    _, run_dir, _ = micro_run
    m = pd.read_parquet(run_dir / "measurements.parquet")
    assert not m["executed"].any() and (m["status"] == "ok").all()
    reads = pd.read_csv(run_dir / "windows.csv")
    ice = m[m["format"] == "iceberg"].merge(reads, on=["dataset", "profile", "window"])
    assert len(ice) == len(m[m["format"] == "iceberg"])
    assert (ice["manifests_scanned"] == ice["manifests_read"]).all()
    assert (ice["files_scanned"] + ice["files_skipped"] == ice["entries_read"]).all()
    # The largest manifest read: one of them, so at least their mean and, where several hold
    # entries, less than their sum.
    assert (ice["largest_manifest_entries"] * ice["manifests_read"] >= ice["entries_read"]).all()
    assert (ice["largest_manifest_entries"] <= ice["entries_read"]).all()
    several = ice[ice["manifests_read"] > 1]
    assert not several.empty and (several["largest_manifest_entries"] < several["entries_read"]).all()
    files = m.groupby(["window", "format"])["files_scanned"].agg(["min", "max"])
    for window in m["window"].unique():
        assert files.loc[(window, "iceberg")].tolist() == files.loc[(window, "parquet")].tolist()
    # The 1-day window on the rewrite reads one or two manifests.
    one_day = ice[(ice["profile"] == "rewrite_64kb") & (ice["window"] == "1d")]
    assert one_day["manifests_scanned"].between(1, 2).all()


def test_the_model_inputs_read_from_the_metadata_are_what_the_plan_read(micro_run) -> None:
    """model_inputs.csv, read from each table's metadata as the doctor reads it, holds per state,
    layout and window what Iceberg's scan report says the plan read: manifests and entries read,
    and entries matched (the partitions inside the window: every day window is whole days)."""
    _, run_dir, _ = micro_run
    m = pd.read_parquet(run_dir / "measurements.parquet")
    ice = m[(m["format"] == "iceberg") & (m["status"] == "ok")]
    inputs = pd.read_csv(run_dir / "model_inputs.csv")
    keys = ["dataset", "profile", "window"]
    assert not inputs.duplicated(keys).any()
    both = ice.merge(inputs, on=keys, validate="many_to_one")
    assert len(both) == len(ice) and set(inputs["window"]) == set(ice["window"])
    assert (both["manifests_scanned"] == both["manifests_read"]).all()
    assert (both["files_scanned"] + both["files_skipped"] == both["entries_read"]).all()
    assert (both["files_scanned"] == both["entries_matched"]).all()
    assert (inputs["delete_manifests"] == 0).all()
    # The largest manifest read agrees with windows.csv's, read from the manifests table.
    listed = pd.read_csv(run_dir / "windows.csv").merge(inputs, on=keys, suffixes=("", "_meta"))
    assert (listed["largest_manifest_entries"] == listed["largest_manifest_entries_meta"]).all()


def test_executing_fails_the_data_files_do_not_exist(ctx, micro_run) -> None:
    _, _, state = micro_run
    with pytest.raises(Exception, match="(?i)not exist|FileNotFound"):
        ctx.spark.sql(f"SELECT max(eventType) FROM {state.table(AS_INGESTED)}").collect()


def test_an_error_row_names_the_java_cause(ctx, micro_run) -> None:
    """py4j's first line names only the call (`An error occurred while calling o42.collectToPython.`);
    the row keeps the Java exception too, so a failed cell says why."""
    from icelab.bench.measure import measure

    _, _, state = micro_run
    failed = measure(ctx.spark, f"SELECT max(eventType) FROM {state.table(AS_INGESTED)}")
    assert failed.status == "error"
    assert re.search("(?i)not exist|FileNotFound", failed.error), failed.error


def _content_digest(spark, table_dir: Path) -> str:  # noqa: ANN001
    rows = (
        spark.read.format("iceberg")
        .load(f"{table_dir}#files")
        .select(
            F.regexp_replace("file_path", r".*/data/", "").alias("path"),
            "record_count",
            "file_size_in_bytes",
            F.to_json("column_sizes").alias("sizes"),
            F.to_json("value_counts").alias("values"),
            F.hex(F.to_json("lower_bounds")).alias("lower"),
        )
        .orderBy("path")
        .collect()
    )
    return hashlib.sha256(repr([tuple(r) for r in rows]).encode()).hexdigest()


@pytest.fixture(scope="module")
def rebuilt(micro_run, tmp_path_factory) -> Path:  # noqa: ANN001
    """The micro state built again by run.py (its own process: the state's catalog name is the
    same) in another directory, from the same seed, then the next: the directory."""
    cfg, _, _ = micro_run
    root = tmp_path_factory.mktemp("rebuilt")
    # One multirun, one JVM: the same seed, then the next.
    done = run_py(
        "-m",
        *MICRO,
        "experiment.build_only=true",
        "progress=false",
        *FAST_JVM,
        f"experiment.seed={cfg.seed},{cfg.seed + 1}",
        f"experiment.meta_dir={root / 'meta'}",
        f"paths.data_dir={cfg.paths.data_dir}",
        f"paths.results_dir={root / 'results'}",
        "engine.driver_memory=2g",
        f"hydra.sweep.dir={root / 'multirun'}",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return root / "meta"


def test_the_same_seed_builds_the_same_entries(ctx, micro_run, rebuilt: Path) -> None:
    """The second build holds entry-for-entry the same metadata; another seed does not."""
    _, _, state = micro_run
    built = sorted(p for p in rebuilt.iterdir() if p.is_dir())
    again = next(p for p in built if p.name == state.path.name)
    changed = next(p for p in built if p.name != state.path.name)
    for name in state.layouts:
        want = _content_digest(ctx.spark, state.table_path(name))
        assert _content_digest(ctx.spark, again / "iceberg" / "bench" / name) == want
        assert _content_digest(ctx.spark, changed / "iceberg" / "bench" / name) != want


def micro_args(cfg, rebuilt: Path, results: Path, *overrides: str) -> list[str]:  # noqa: ANN001
    """`python run.py` arguments measuring the rebuilt micro state, results under `results`."""
    return [
        *MICRO,
        "progress=false",
        *FAST_JVM,
        *overrides,
        f"experiment.meta_dir={rebuilt}",
        f"paths.data_dir={cfg.paths.data_dir}",
        f"paths.results_dir={results}",
    ]


# Room for a cold JVM's first plan (about 0.15 s here, uncontended); the test idles through it
# for the stalled plan (30 s cost the suite 25 s).
PLAN_TIMEOUT_S = 5


def test_a_plan_that_heeds_no_interrupt_or_runs_out_of_heap_gets_a_new_jvm_and_the_run_goes_on(
    micro_run, rebuilt: Path, tmp_path: Path
) -> None:
    """protocol.timeout_grace_s: a measurement still running that long after its timeout (a 10M
    plan thrashing in garbage collection) ends the driver JVM; a measurement the JVM answers with
    OutOfMemoryError (a plan that does not fit the heap) is recorded as such and its JVM ended
    too. Both cells are error rows the contract accepts as outcomes, and the run measures the
    rest in a new session each time. The stall point holds the second measurement in Python as a
    py4j call that heeds no interrupt would: without the JVM ended it would hold it for 600 s,
    past run_py's timeout; the OOM point makes the JVM throw a real OutOfMemoryError at the
    fourth. (On the rebuilt state: this worker's session holds the micro state's lock, which a
    run takes exclusively first.)"""
    cfg, _, _ = micro_run
    results = tmp_path / "results"
    done = run_py(
        *micro_args(
            cfg,
            rebuilt,
            results,
            "meta.meta_micro.modes=[local]",
            "meta.meta_micro.listing=[serial]",
            "meta.meta_micro.windows=[1d,7d]",
            # The stalled plan is ended 1 s past its timeout.
            f"protocol.timeout_s={PLAN_TIMEOUT_S}",
            "protocol.timeout_grace_s=1",
            "engine.driver_memory=2g",
        ),
        env={**os.environ, failpoints.STALL_ENV: "measure.plan:2+600", failpoints.OOM_ENV: "measure.plan:4"},
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("measuring on in a new session") == 2, done.stderr[-3000:]
    (run_dir,) = (results / "runs" / "metadata_scale").iterdir()
    rows = pd.read_parquet(run_dir / "measurements.parquet").sort_values("measured_utc")
    assert len(rows) == 6
    assert list(rows["status"]) == ["ok", "error", "ok", "error", "ok", "ok"], rows["error"].tolist()
    stalled, failed = rows["error"].iloc[1], rows["error"].iloc[3]
    assert stalled.startswith(f"{TIMED_OUT}{PLAN_TIMEOUT_S}: ") and "was ended" in stalled, stalled
    pid = int(re.search(r"pid (\d+)", stalled)[1])
    assert not psutil.pid_exists(pid)
    assert failed.startswith(f"{OUT_OF_MEMORY}2g: ") and "java.lang.OutOfMemoryError" in failed, failed
    assert "java.lang.OutOfMemoryError: Java heap space; a new session follows" in done.stderr
    assert validate(run_dir) == []  # cells the protocol stopped or the heap refused are outcomes


# Three cells, each in a JVM of its own.
FRESH_JVM = (
    "meta.meta_micro.fresh_jvm=true",
    "meta.meta_micro.modes=[local]",
    "meta.meta_micro.listing=[serial]",
    "meta.meta_micro.windows=[1d]",
    "engine.driver_memory=1g",
)


def test_fresh_jvm_measures_each_cell_in_a_driver_jvm_of_its_own(
    micro_run, rebuilt: Path, tmp_path: Path
) -> None:
    """meta.<size>.fresh_jvm (meta_10m: a long session's heap held no 180-day plan): before each
    measurement the session and its JVM are ended and a new one opened, which first plans,
    untimed, the state's own cheapest layout (fewest entries read at its first window) and its
    Parquet variants; every cell is still measured, in a JVM no other cell ran in."""
    cfg, _, _ = micro_run
    results = tmp_path / "results"
    done = run_py(*micro_args(cfg, rebuilt, results, *FRESH_JVM), timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    new_session = r"measuring on in a new session \(driver JVM pid (\d+); (.*)\)"
    found = re.findall(new_session, done.stderr)
    pids = [int(pid) for pid, _ in found]
    assert len(pids) == len(set(pids)) == 3, done.stderr[-3000:]
    assert not any(psutil.pid_exists(p) for p in pids)
    (run_dir,) = (results / "runs" / "metadata_scale").iterdir()
    reads = pd.read_csv(run_dir / "windows.csv")
    cheapest = reads.sort_values("entries_read")["profile"].iloc[0]
    assert reads["profile"].nunique() == 2 and (reads["entries_read"].nunique() == 2)
    warm = f"2 untimed plans first: iceberg/{cheapest}/local, parquet/listing_serial"
    assert {w for _, w in found} == {warm}, done.stderr[-3000:]
    rows = pd.read_parquet(run_dir / "measurements.parquet")
    assert len(rows) == 3 and set(rows["status"]) == {"ok"}, rows["error"].tolist()
    assert validate(run_dir) == []


def test_ctrl_c_in_a_reopened_session_stops_after_the_measurement_in_flight(
    micro_run, rebuilt: Path, tmp_path: Path
) -> None:
    """A new session (fresh_jvm, or after a JVM was ended) keeps icelab's Ctrl-C handler: the
    measurement in flight (held in the JVM by the stall point) completes and is kept, and the run
    ends interrupted. PySpark's new SparkContext installs a handler of its own, which raised inside
    that py4j call: the run failed with a Py4JError traceback instead (seen in a 10M run)."""
    cfg, _, _ = micro_run
    results = tmp_path / "results"
    args = micro_args(cfg, rebuilt, results, *FRESH_JVM)
    # The stall outlasts the 2 s before SIGINT by 6 s, room for the new session's untimed plans.
    env = {**os.environ, failpoints.STALL_ENV: "measure.plan:2+8@jvm"}
    proc = start_run_py(*args, env=env)
    seen: list[str] = []
    try:
        for line in proc.stderr:  # the second new session opens, then its first plan stalls
            seen.append(line)
            if sum("measuring on in a new session" in s for s in seen) == 2:
                time.sleep(2)
                proc.send_signal(signal.SIGINT)
                break
        seen.append(proc.communicate(timeout=300)[1])
    finally:
        proc.kill()
    err = "".join(seen)
    assert proc.returncode == 130, err[-3000:]
    assert "stopping after the current measurement" in err and "Py4JError" not in err, err[-3000:]
    (run_dir,) = (results / "runs" / "metadata_scale").iterdir()
    assert run_state.read(run_dir)["status"] == "interrupted"
    rows = pd.read_parquet(run_dir / "measurements.parquet")
    assert len(rows) == 2 and set(rows["status"]) == {"ok"}, rows["error"].tolist()


def test_planning_modes_are_what_their_names_say(ctx, micro_run) -> None:
    """`distributed` plans with a Spark job (executors read the manifests); `local` with none, so
    the setting (spark.sql.iceberg.data-planning-mode) is not silently ignored. (It is, by Iceberg
    itself, when spark.driver.maxResultSize is under 256 MB or 0: conf/experiment/metadata_scale.yaml.)"""
    from icelab.bench.measure import measure
    from icelab.bench.variants import settings
    from icelab.experiments.metadata_scale import meta_variants

    _, _, state = micro_run
    # Every job of the session, whatever its group (Iceberg runs its planning job in one of its own).
    store = ctx.spark._jsc.sc().statusStore()
    jobs = {}
    for variant in meta_variants(state):
        if variant.format != "iceberg" or variant.profile != AS_INGESTED:
            continue
        before = store.jobsList(None).size()
        with settings(ctx.spark, variant):
            done = measure(
                ctx.spark, f"SELECT count(*) FROM {variant.table} WHERE eventType = 'x'", execute=False
            )
        assert done.status == "ok" and done.scan["manifests_scanned"] == state.size.manifests
        jobs[variant.setup] = store.jobsList(None).size() - before
    assert jobs["distributed"] >= 1 and jobs["local"] == 0 and jobs["local_cache"] == 0, jobs


def test_plans_reading_over_single_round_entries_are_measured_once(ctx, compose_run, micro_run) -> None:
    """meta.<size>.single_round_entries (meta_10m: its plans of minutes once, those of seconds
    three times): a cell whose plan reads more entries than the limit (the run's windows.csv) gets
    one round and no warm-up, every other cell the state's warm-ups and repetitions, and the
    run plans exactly the rows it writes."""
    limit = 2000  # micro: as ingested and 30 days read nearly all 3,000 entries; 1 day of the rewrite, fewer
    cfg = compose_run(
        *MICRO,
        "meta.meta_micro.modes=[local]",
        "meta.meta_micro.listing=[serial]",
        "meta.meta_micro.windows=[1d,30d]",
        "meta.meta_micro.warmups=1",
        "meta.meta_micro.repetitions=2",
        f"meta.meta_micro.single_round_entries={limit}",
    )
    run_dir = run_here(cfg)
    reads = pd.read_csv(run_dir / "windows.csv").set_index(["profile", "window"])["entries_read"]
    rows = pd.read_parquet(run_dir / "measurements.parquet")
    found = rows.groupby(["format", "profile", "window"])["warmup"].agg(["size", "sum"])
    expected = {
        cell: (1, 0) if cell[0] == "iceberg" and reads[cell[1:]] > limit else (3, 1) for cell in found.index
    }
    assert {cell: tuple(found.loc[cell]) for cell in found.index} == expected
    assert set(expected.values()) == {(1, 0), (3, 1)}  # both kinds of cell occur
    assert set(rows["status"]) == {"ok"} and validate(run_dir) == []  # planned_rows: the rows written
