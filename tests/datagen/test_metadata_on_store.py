"""A metadata-scale state measured on a store (icelab.datagen.metadata.staging): its tables
created there, written by the builder under their store URIs into a local staging directory
(StagedFileSystem.java), copied up, then read from there alone. The store here is another local
directory (the staging file system replaces the file: scheme in the builder's JVM as it replaces
s3a: for RGW; the copy writes through Hadoop's FileSystem, the same calls as to s3a://); the
choices a store run makes before Spark starts are checked on an s3a:// data directory."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from icelab.core import storage
from icelab.core.config.metadata import meta_configs, metadata_scale_config
from icelab.core.errors import UserError
from icelab.datagen.metadata.state import MARKER, ON_STORE, STAGED, MetaState, ensure, meta_root
from icelab.experiments import model_inputs
from icelab.experiments.metadata_scale import state_windows
from tests.datagen.test_metadata import MICRO

STORE = "s3a://icelab/data"


@pytest.fixture(scope="module")
def micro(compose_run, tiny):  # noqa: ANN001, ANN201
    """The micro state's config without its Parquet tree (a store holds Iceberg tables only)."""
    cfg = compose_run(*MICRO, "meta.meta_micro.parquet=false", "experiment.model_inputs=true")
    return cfg, meta_configs(cfg)["meta_micro"], metadata_scale_config(cfg)


@pytest.fixture(scope="module")
def states(ctx, tiny, micro, tmp_path_factory):  # noqa: ANN001, ANN201
    """(local, on the store): the state built where it is measured on local disk, and the same
    state built for another directory standing in for a store, as a store state is."""
    _, size, mcfg = micro
    # Its own data directory: a state in use stays locked by its process (icelab.core.locks), and
    # the calibration's tests build the same micro state (same hash) in the shared one.
    base = tmp_path_factory.mktemp("on-store")
    local = MetaState.of("meta_micro", size, mcfg, tiny.dataset, str(base / "data"))
    ensure(ctx.spark, local, ctx.engine, progress=False)
    on_store = dataclasses.replace(
        local,
        path=base / "build" / local.path.name,
        store=storage.to_uri(str(base / "store" / local.path.name)),
    )
    ensure(ctx.spark, on_store, ctx.engine, progress=False)
    return local, on_store


def inputs(ctx, state: MetaState) -> list[dict]:  # noqa: ANN001
    """The model's inputs read from the state's metadata where its catalog points."""
    windows = state_windows(state, list(state.size.windows or state.experiment.windows))
    rows = model_inputs.state_inputs(ctx.spark, state, windows)
    keep = (
        "profile",
        "window",
        "manifests_read",
        "entries_read",
        "entries_matched",
        "largest_manifest_entries",
    )
    return [{k: row[k] for k in keep} for row in rows]


def test_the_store_mark_names_the_upload_and_is_reused(ctx, states) -> None:
    """The store's completion mark is written last and records what was copied up; a second
    `ensure` reuses it (the same record, nothing built or copied again); the staging copy is gone."""
    _, on_store = states
    mark = json.loads(Path(storage.local_path(storage.join(on_store.store, MARKER))).read_text())
    assert mark["hash"] == on_store.hash
    # Every manifest the builder wrote was staged, then copied up (none written there directly).
    written = sum(layout["manifests"] for layout in mark["layouts"].values())
    assert mark["uploaded"]["files"] > written and mark["uploaded"]["bytes"] > 0
    assert not (on_store.path / STAGED).exists()
    again = ensure(ctx.spark, on_store, ctx.engine, progress=False)
    assert again == mark


def test_every_path_of_a_store_table_names_the_store(ctx, states) -> None:
    """Manifest lists, manifests and data files, as Iceberg's metadata tables list them, and the
    table's location are all under the store: nothing points back at the place it was built."""
    _, on_store = states
    for name in on_store.layouts:
        table = on_store.table(name)
        paths = [r[0] for r in ctx.spark.sql(f"SELECT manifest_list FROM {table}.snapshots").collect()]
        paths += [r[0] for r in ctx.spark.sql(f"SELECT path FROM {table}.manifests").collect()]
        paths += [r[0] for r in ctx.spark.sql(f"SELECT file_path FROM {table}.files").collect()]
        target = storage.local_path(on_store.table_uri(name))
        assert paths and all(storage.local_path(p).startswith(target + "/") for p in paths), name
        # The table's own location too (a table located where it was built would write there).
        metadata = Path(target) / "metadata"
        version = (metadata / "version-hint.text").read_text().strip()
        current = json.loads((metadata / f"v{version}.metadata.json").read_text())
        assert current["location"] == on_store.table_uri(name), name


def test_a_store_state_reads_as_the_local_one_with_its_local_directory_gone(ctx, states) -> None:
    """With its local directory deleted, the store state's tables give the model the same inputs
    per layout and window as the same state built on local disk, and hold the same entries."""
    local, on_store = states
    shutil.rmtree(on_store.path)
    assert inputs(ctx, on_store) == inputs(ctx, local)
    for name in on_store.layouts:
        count = "SELECT count(*) FROM {}.files"
        assert (
            ctx.spark.sql(count.format(on_store.table(name))).first()[0]
            == (ctx.spark.sql(count.format(local.table(name))).first()[0])
        )


def test_a_store_state_is_built_under_copy_from_and_named_on_the_store(tiny, micro, data_dir) -> None:
    """On an s3a:// data directory a state is staged under <copy_from>/meta/on-store (its template
    the dataset there) and built and measured at <data_dir>/meta/<name>-<hash>; the same hash as
    on local disk."""
    cfg, size, mcfg = micro
    local = MetaState.of("meta_micro", size, mcfg, tiny.dataset, cfg.paths.data_dir)
    state = MetaState.of("meta_micro", size, mcfg, tiny.dataset, STORE, str(data_dir))
    assert state.hash == local.hash
    assert state.path == Path(data_dir) / "meta" / ON_STORE / local.path.name
    assert state.store == f"{STORE}/meta/{local.path.name}"
    assert state.warehouse_uri == f"{state.store}/iceberg"
    assert state.template.uri == storage.to_uri(str(Path(data_dir) / tiny.dataset.uri.rsplit("/", 1)[1]))
    # Built where it is measured: every path the builder records names the store.
    assert state.built_uri("as_ingested") == state.table_uri("as_ingested")
    assert local.built_uri().startswith("file:///")


def test_a_store_without_a_local_copy_from_is_one_line(micro) -> None:
    _, _, mcfg = micro
    with pytest.raises(UserError, match="paths.copy_from"):
        meta_root(mcfg, STORE)
    with pytest.raises(UserError, match="paths.copy_from"):
        meta_root(mcfg, STORE, "s3a://other/data")


def test_a_store_state_with_a_parquet_tree_is_refused(compose_run, tiny, data_dir) -> None:
    cfg = compose_run(*MICRO)
    size = meta_configs(cfg)["meta_micro"]
    assert size.parquet
    with pytest.raises(UserError, match="parquet=false"):
        MetaState.of("meta_micro", size, metadata_scale_config(cfg), tiny.dataset, STORE, str(data_dir))
