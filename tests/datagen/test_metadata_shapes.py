"""Shaped metadata-scale states (icelab.datagen.metadata.shapes): a micro state of each held-out
shape built through ShapedBuilder, its Iceberg tables' partition spec and schema, and what a
window's plan reads and skips by that spec (Iceberg's own scan metrics); and the state hash, which
names a shape and leaves icelab's own states' hashes as they were."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import pytest

from icelab.bench.measure import measure, plan_query
from icelab.bench.windows import Window, load_query, render
from icelab.core.config.metadata import meta_configs, metadata_scale_config
from icelab.datagen.metadata import shapes
from icelab.datagen.metadata.state import AS_INGESTED, MetaState, ensure, spec_of
from icelab.experiments import model_inputs
from icelab.experiments.metadata_scale import manifest_ranges, state_windows, window_reads
from tests import jvm_archive

MICRO = [
    "experiment=metadata_scale",
    "meta=[meta_micro]",
    f"experiment.builder_java_options='{jvm_archive.BASE_FLAGS}'",  # C1 only: seconds of work
    "meta.meta_micro.parquet=false",
    "meta.meta_micro.modes=[local]",
]
# (partitioning, schema, deletes) per shape; the rewrite of meta_micro (64 KB) for every one.
SHAPES = {
    "hour": ("hour", "wide", "none"),
    "month": ("month", "wide", "none"),
    "identity_day": ("identity_day", "wide", "none"),
    "bucket_day": ("bucket_day", "wide", "none"),
    "narrow": ("day", "narrow", "none"),
    "position_deletes": ("day", "wide", "position"),
}
# The partition fields Iceberg names for each partitioning (the table's spec, in order).
FIELDS = {
    "day": ["timestamp_day"],
    "hour": ["timestamp_hour"],
    "month": ["timestamp_month"],
    "identity_day": ["eventType", "timestamp_day"],
    "bucket_day": ["_id_bucket", "timestamp_day"],
}
REWRITE = "rewrite_64kb"


def micro_state(compose_cfg, template, data_dir: str, name: str, *overrides: str) -> MetaState:  # noqa: ANN001
    """meta_micro with `overrides`, as the state `name`."""
    cfg = compose_cfg(*MICRO, *overrides)
    return MetaState.of(name, meta_configs(cfg)["meta_micro"], metadata_scale_config(cfg), template, data_dir)


@pytest.fixture(scope="module")
def shaped(compose_run, ctx, tiny) -> dict[str, MetaState]:  # noqa: ANN001
    """Every shape's micro state, built (or reused) in this process's session."""
    data_dir = compose_run(*MICRO).paths.data_dir
    states = {}
    for shape, (partitioning, schema, deletes) in SHAPES.items():
        state = micro_state(
            compose_run,
            tiny.dataset,
            data_dir,
            f"shape_{shape}",
            f"meta.meta_micro.partitioning={partitioning}",
            f"meta.meta_micro.schema={schema}",
            f"meta.meta_micro.deletes={deletes}",
        )
        ensure(ctx.spark, state, ctx.engine, progress=False)
        states[shape] = state
    return states


def busiest(ctx, state: MetaState, unit: str) -> Window:  # noqa: ANN001
    """The hour or day (`unit`) holding the most entries of the rewrite (the last day of the
    micro state holds few: its late data has not come yet)."""
    start = ctx.spark.sql(
        f"SELECT date_trunc('{unit}', readable_metrics.timestamp.lower_bound) AS at, count(*) AS n "
        f"FROM {state.table(REWRITE)}.data_files GROUP BY 1 ORDER BY n DESC, at LIMIT 1"
    ).first()["at"]
    return Window(f"1{unit[0]}", start, start + dt.timedelta(**{f"{unit}s": 1}))


def plan(ctx, state: MetaState, layout: str, window: str | Window) -> dict[str, int]:  # noqa: ANN001
    """Iceberg's scan metrics of the count query's plan over `window` (local planning)."""
    (found,) = state_windows(state, [window]) if isinstance(window, str) else (window,)
    ctx.spark.conf.set("spark.sql.iceberg.data-planning-mode", "local")
    done = measure(ctx.spark, render(load_query("count_window"), state.table(layout), found), execute=False)
    assert done.status == "ok", done.error
    return done.scan


def reads(ctx, state: MetaState, layout: str, window: str) -> dict:  # noqa: ANN001
    """What the run's windows.csv says the plan reads (from the manifests' partition bounds)."""
    ranges = manifest_ranges(ctx.spark, state.table(layout), state.size.partitioning)
    return window_reads(state, layout, ranges, state_windows(state, [window]))[0]


def in_window(ctx, state: MetaState, layout: str, found: Window) -> int:  # noqa: ANN001
    """Entries whose timestamps lie inside the window (their bounds, read back through Spark)."""
    return ctx.spark.sql(
        f"SELECT count(*) FROM {state.table(layout)}.data_files "
        f"WHERE readable_metrics.timestamp.lower_bound >= TIMESTAMP '{found.params['ts_from']}' "
        f"AND readable_metrics.timestamp.upper_bound < TIMESTAMP '{found.params['ts_to']}'"
    ).first()[0]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_layout_has_the_shapes_spec_and_every_entry(ctx, shaped, shape: str) -> None:
    state = shaped[shape]
    for layout in state.layouts:
        table = state.table(layout)
        fields = ctx.spark.table(f"{table}.partitions").schema["partition"].dataType.fieldNames()
        assert fields == FIELDS[state.size.partitioning], (layout, fields)
        assert ctx.spark.table(f"{table}.data_files").count() == state.size.data_files


@pytest.mark.parametrize("shape", list(SHAPES))
def test_partition_values_agree_with_the_entries_timestamps(ctx, shaped, shape: str) -> None:
    """Each entry's time partition holds its timestamp bounds (the hour's, the day's, the
    month's), and an identity field's value is the entry's only value of that column."""
    state = shaped[shape]
    time_field = FIELDS[state.size.partitioning][-1]
    unit = time_field.removeprefix("timestamp_")
    lo, hi = "readable_metrics.timestamp.lower_bound", "readable_metrics.timestamp.upper_bound"
    # Iceberg's value of each time transform, from a timestamp (Spark shows hours and months as
    # counts since 1970, days as dates).
    value = {
        "day": lambda ts: f"to_date({ts})",
        "hour": lambda ts: f"floor(unix_seconds({ts}) / 3600)",
        "month": lambda ts: f"(year({ts}) - 1970) * 12 + month({ts}) - 1",
    }[unit]
    wrong = [f"partition.{time_field} != {value(lo)}", f"partition.{time_field} != {value(hi)}"]
    if shape == "identity_day":
        wrong += [
            f"partition.eventType != readable_metrics.eventType.{end}"
            for end in ("lower_bound", "upper_bound")
        ]
    bad = ctx.spark.sql(
        f"SELECT count(*) FROM {state.table(REWRITE)}.data_files WHERE {' OR '.join(wrong)}"
    ).first()[0]
    assert bad == 0
    if shape == "hour":
        hours = ctx.spark.sql(
            f"SELECT count(DISTINCT partition) FROM {state.table(REWRITE)}.data_files"
        ).first()[0]
        # Up to 24 a day (the micro state's days of on-time data hold about 100 entries each).
        assert hours > 10 * state.size.days
    if shape in ("identity_day", "bucket_day"):
        first = FIELDS[state.size.partitioning][0]
        values = ctx.spark.sql(
            f"SELECT count(DISTINCT partition.{first}) FROM {state.table(REWRITE)}.data_files"
        ).first()[0]
        assert values == (len(shapes.CATEGORIES) if shape == "identity_day" else shapes.BUCKETS)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_plan_reads_the_manifests_its_window_meets(ctx, shaped, shape: str) -> None:
    """Per layout and window, the plan scans the manifests whose time bounds meet the window (as
    windows.csv says) and skips the rest; the entries of those manifests are scanned or skipped."""
    state = shaped[shape]
    for layout in state.layouts:
        for window in ("1h", "1d", "7d"):
            scan, expect = plan(ctx, state, layout, window), reads(ctx, state, layout, window)
            assert scan["manifests_scanned"] == expect["manifests_read"], (layout, window)
            assert scan["files_scanned"] + scan["files_skipped"] == expect["entries_read"], (layout, window)
            assert scan["manifests_scanned"] + scan["manifests_skipped"] == scan["manifests_total"]


def test_an_hour_partition_prunes_an_hour(ctx, shaped) -> None:
    """Under hours(timestamp), a 1h plan of the rewrite reads fewer manifests than its 1d plan,
    and scans exactly the entries of that hour."""
    state = shaped["hour"]
    window = busiest(ctx, state, "hour")
    day = Window("1d", window.start.replace(hour=0), window.start.replace(hour=0) + dt.timedelta(days=1))
    one_hour, one_day = plan(ctx, state, REWRITE, window), plan(ctx, state, REWRITE, day)
    assert one_hour["manifests_scanned"] < one_day["manifests_scanned"]
    assert one_hour["files_scanned"] == in_window(ctx, state, REWRITE, window) > 0


def test_a_month_partition_reads_the_whole_month(ctx, shaped) -> None:
    """Under months(timestamp), a 1-day window reads the manifests of its whole month: as many
    as a 7-day window inside the same month, and every entry of the month is evaluated."""
    state = shaped["month"]
    one, seven = plan(ctx, state, REWRITE, "1d"), plan(ctx, state, REWRITE, "7d")
    assert one["manifests_scanned"] == seven["manifests_scanned"]
    month = ctx.spark.sql(
        f"SELECT count(*) FROM {state.table(REWRITE)}.data_files WHERE partition.timestamp_month = "
        f"(SELECT max(partition.timestamp_month) FROM {state.table(REWRITE)}.data_files)"
    ).first()[0]
    assert one["files_scanned"] + one["files_skipped"] == month
    assert one["files_scanned"] < month  # the entries' own timestamps still skip most


@pytest.mark.parametrize("shape", ["identity_day", "bucket_day"])
def test_a_window_cannot_prune_the_field_before_the_day(ctx, shaped, shape: str) -> None:
    """The rewrite clusters by the first field, then the day: a 1-day plan reads a manifest of
    every category or bucket holding that day (each of them does, on a day of on-time data)."""
    state = shaped[shape]
    first = FIELDS[state.size.partitioning][0]
    window = busiest(ctx, state, "day")
    one = plan(ctx, state, REWRITE, window)
    values = len(shapes.CATEGORIES) if shape == "identity_day" else shapes.BUCKETS
    assert one["manifests_scanned"] >= values
    # A manifest holds two values of the first field only where one value's entries end.
    firsts = ctx.spark.sql(
        f"SELECT partition_summaries[0] AS s FROM {state.table(REWRITE)}.manifests"
    ).collect()
    assert sum(r.s.lower_bound != r.s.upper_bound for r in firsts) < values
    hit = ctx.spark.sql(
        f"SELECT count(DISTINCT partition.{first}) FROM {state.table(REWRITE)}.data_files "
        f"WHERE partition.timestamp_day = DATE '{window.start.date()}'"
    ).first()[0]
    assert hit == values


def test_the_narrow_schema_carries_ten_columns_statistics(ctx, shaped) -> None:
    """Narrow entries hold statistics for the narrow table's 10 leaves only, so they are
    smaller than the wide schema's (about 725 bytes)."""
    state = shaped["narrow"]
    assert len(ctx.spark.table(state.table(AS_INGESTED)).columns) == len(shapes.NARROW)
    sizes = ctx.spark.sql(
        f"SELECT max(size(column_sizes)), max(size(lower_bounds)) FROM {state.table(AS_INGESTED)}.data_files"
    ).first()
    assert sizes[0] == 10 and 5 <= sizes[1] <= 10, sizes
    manifests = ctx.spark.sql(
        f"SELECT sum(length), sum(added_data_files_count) FROM {state.table(AS_INGESTED)}.manifests"
    ).first()
    assert manifests[0] / manifests[1] < 0.6 * 725


def delete_metrics(ctx, state: MetaState, layout: str, window: str) -> dict[str, int]:  # noqa: ANN001
    """Iceberg's delete-side scan metrics of the count query's plan over `window`."""
    (found,) = state_windows(state, [window])
    ctx.spark.conf.set("spark.sql.iceberg.data-planning-mode", "local")
    _, _, scans = plan_query(ctx.spark, render(load_query("count_window"), state.table(layout), found))
    names = ("totalDeleteManifests", "scannedDeleteManifests", "resultDeleteFiles")
    return {name: sum(int(scan.metrics().apply(name).value()) for scan in scans) for name in names}


@pytest.mark.parametrize("layout", [AS_INGESTED, REWRITE])
def test_position_deletes_are_read_by_a_plan(ctx, shaped, layout: str) -> None:
    """With position deletes (merge-on-read), each layout has a delete manifest per delete commit,
    and a plan reads them and matches each data file it keeps with its partition's delete files;
    a state without deletes has none."""
    state = shaped["position_deletes"]
    content = dict(
        ctx.spark.sql(f"SELECT content, count(*) FROM {state.table(layout)}.manifests GROUP BY 1").collect()
    )
    assert content[1] == shapes.DELETE_COMMITS and content[0] >= 1
    found = delete_metrics(ctx, state, layout, "1d")
    assert (
        found["scannedDeleteManifests"]
        == shapes.DELETE_COMMITS
        == reads(ctx, state, layout, "1d")["delete_manifests_read"]
    )
    files = plan(ctx, state, layout, "1d")["files_scanned"]
    assert files > 0 and found["resultDeleteFiles"] == shapes.DELETE_COMMITS * files
    assert delete_metrics(ctx, shaped["narrow"], layout, "1d") == dict.fromkeys(found, 0)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_model_inputs_read_by_the_doctors_reader_are_what_each_plan_read(ctx, shaped, shape: str) -> None:
    """What the blind check predicts from (icelab.experiments.model_inputs: each table's metadata
    read as the doctor reads it, over the query's exact span) names, for every shape, layout and
    window, the data manifests Iceberg's scan report says the plan opened and the entries they
    hold, and the delete manifests the plan read besides."""
    state = shaped[shape]
    windows = state_windows(state, ["1h", "1d", "7d"])
    for row in model_inputs.state_inputs(ctx.spark, state, windows):
        layout, window = row["profile"], row["window"]
        scan = plan(ctx, state, layout, window)
        # Only this shape has delete manifests (a plan of another reads none: the test above).
        deletes = (
            delete_metrics(ctx, state, layout, window)["scannedDeleteManifests"]
            if shape == "position_deletes"
            else 0
        )
        assert row["delete_manifests"] == deletes, (layout, window)
        assert row["manifests_read"] - row["delete_manifests"] == scan["manifests_scanned"], (layout, window)
        if not deletes:
            assert row["entries_read"] == scan["files_scanned"] + scan["files_skipped"], (layout, window)


# --- the state hash ----------------------------------------------------------------------------

STUB = SimpleNamespace(hash="template")  # the hash reads the template's hash only


def test_a_shape_is_another_state(compose_cfg, tmp_path: Path) -> None:
    """Each option gives its own hash; the default values, given or not, give icelab's own state."""
    plain = micro_state(compose_cfg, STUB, str(tmp_path), "m")
    given = micro_state(
        compose_cfg,
        STUB,
        str(tmp_path),
        "m",
        "meta.meta_micro.partitioning=day",
        "meta.meta_micro.schema=wide",
    )
    assert given.hash == plain.hash
    hashes = {plain.hash}
    for partitioning, schema, deletes in SHAPES.values():
        state = micro_state(
            compose_cfg,
            STUB,
            str(tmp_path),
            "m",
            f"meta.meta_micro.partitioning={partitioning}",
            f"meta.meta_micro.schema={schema}",
            f"meta.meta_micro.deletes={deletes}",
        )
        hashes.add(state.hash)
    assert len(hashes) == 1 + len(SHAPES)


@pytest.mark.parametrize("size", ["meta_micro", "meta_36k", "meta_200k", "meta_1m", "meta_10m"])
def test_icelabs_own_states_hash_what_they_hashed_before_shapes(compose_cfg, size: str) -> None:
    """A day-partitioned wide state's hash reads exactly what it read before shapes existed (so
    its hash, and the stored results named by it, stay): no shape, no shaped builder."""
    cfg = compose_cfg("experiment=metadata_scale", f"meta=[{size}]")
    spec = spec_of(meta_configs(cfg)[size], metadata_scale_config(cfg), STUB)
    assert set(spec) == {"size", "skew", "end", "parquet", "seed", "template", "builder", "layout"}
    assert set(spec["size"]) == {
        "data_files",
        "manifests",
        "manifests_per_commit",
        "days",
        "rewrites",
        "parquet",
    }


def test_a_shaped_state_has_no_parquet_tree(compose_cfg) -> None:
    from icelab.core.errors import UserError

    with pytest.raises(UserError, match="parquet: false"):
        meta_configs(compose_cfg(*MICRO[:2], "meta.meta_micro.partitioning=hour"))


def test_every_held_out_config_is_its_shape(compose_cfg) -> None:
    """conf/experiment/costmodel_check.yaml: each held-out state at 200k and 1M, Iceberg local
    planning only, rewritten at 8 MB, on the pre-registered windows."""
    cfg = compose_cfg("experiment=costmodel_check")
    sizes, exp = meta_configs(cfg), metadata_scale_config(cfg)
    assert [str(w) for w in exp.windows] == ["1h", "1d", "7d", "30d", "90d"]
    assert len(sizes) == 2 * len(SHAPES)
    for name, size in sizes.items():
        shape = name.removeprefix("heldout_").rsplit("_", 1)[0]
        assert (size.partitioning, size.columns, size.deletes) == SHAPES[shape], name
        assert size.modes == ["local"] and not size.parquet and set(size.rewrites) == {"rewrite_8mb"}
        assert size.data_files == {"200k": 200_000, "1m": 1_000_000}[name.rsplit("_", 1)[1]]
    assert dt.date(2026, 6, 30) == exp.end
