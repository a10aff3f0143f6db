"""The real Hydra config composes for every option, and bad values fail as one line."""

from __future__ import annotations

import pytest

from icelab.core.cli import check_choices, choices
from icelab.core.config import dataset_config, engine_config, flatten, paths_config
from icelab.core.errors import UserError


@pytest.mark.parametrize("dataset", choices("dataset"))
def test_every_dataset_composes_and_validates(compose_cfg, dataset):
    ds = dataset_config(compose_cfg(f"dataset={dataset}"))
    assert ds.name == dataset
    assert ds.total_rows >= ds.commits


@pytest.mark.parametrize("engine", choices("engine"))
def test_every_engine_composes_and_validates(compose_cfg, engine):
    # The tests' shrunk master (local[2]) is no standalone master: standalone starts its own.
    eng = engine_config(compose_cfg(f"engine={engine}", *(["engine.master=null"] * (engine == "standalone"))))
    # The comparison traps are pinned in every engine, not left to Spark's defaults.
    conf = flatten(eng.conf)
    assert conf["spark.sql.iceberg.aggregate-push-down.enabled"] == "false"
    assert conf["spark.sql.hive.filesourcePartitionFileCacheSize"] == "0"
    assert eng.iceberg_metadata_cache is False


def test_experiment_choices_include_datagen_and_verify():
    assert {"datagen", "verify"} <= set(choices("experiment"))


def test_shared_parts_are_not_choices():
    assert "_base" not in choices("dataset")
    assert "_common" not in choices("engine")


def test_medium_is_sized_for_the_study(compose_cfg):
    ds = dataset_config(compose_cfg("dataset=medium"))
    # One manifest per commit (merging off): >= 100 manifests as ingested.
    assert ds.commits >= 100
    assert ds.iceberg_properties["commit.manifest-merge.enabled"] == "false"


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("dataset.scale=0", "dataset.scale=0"),
        ("dataset.scale=-2", "dataset.scale=-2"),
        ("dataset.rows=0", "dataset.rows=0"),
        ("dataset.commits=-1", "dataset.commits=-1"),
        ("dataset.late_fraction=1.5", "dataset.late_fraction=1.5"),
        ("dataset.partitioning=week", "dataset.partitioning='week'"),
    ],
)
def test_bad_dataset_values_give_one_line(compose_cfg, override, needle):
    with pytest.raises(UserError) as err:
        dataset_config(compose_cfg(override))
    message = str(err.value)
    assert needle in message
    assert "\n" not in message


STANDALONE = ["engine=standalone", "engine.master=null"]


def test_standalone_sizes_its_executor_to_the_worker(compose_cfg):
    eng = engine_config(compose_cfg(*STANDALONE, "engine.worker_memory=2g"))
    assert (eng.starts_cluster, eng.executor_memory) == (True, "2g")  # it follows worker_memory
    assert not engine_config(compose_cfg(*STANDALONE, "engine.master=spark://head:7077")).starts_cluster


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["engine.executor_memory=4g"],
            "invalid config: engine: executor_memory 4g exceeds worker_memory 3g: no worker could start an "
            "executor",
        ),
        (
            ["++engine.conf.spark.executor.cores=3"],
            "invalid config: engine: spark.executor.cores 3 exceeds worker_cores 2: no worker could start an "
            "executor",
        ),
        (
            ["engine.worker_memory=400m"],
            "invalid config: engine: executor_memory 400m is below Spark's least, 450m (unless set, it "
            "follows worker_memory)",
        ),
        (
            ["engine.master=yarn"],
            "invalid config: engine: engine=standalone takes master=null (icelab starts a cluster) or a "
            "standalone master spark://host:port, not 'yarn'",
        ),
    ],
)
def test_a_standalone_cluster_that_cannot_run_is_one_line(compose_cfg, overrides, message):
    with pytest.raises(UserError) as err:
        engine_config(compose_cfg(*STANDALONE, *overrides))
    assert str(err.value) == message


def test_only_standalone_takes_no_master(compose_cfg):
    with pytest.raises(UserError) as err:
        engine_config(compose_cfg("engine=local", "engine.master=null"))
    assert str(err.value) == (
        "invalid config: engine: master is empty: name one (local[*], spark://host:port, yarn, "
        "k8s://...) or use engine=standalone to start a cluster on this machine"
    )


def test_fractions_over_one_are_rejected(compose_cfg):
    cfg = compose_cfg("dataset.late_fraction=0.7", "dataset.clock_skew_fraction=0.5")
    with pytest.raises(UserError, match="at most 1"):
        dataset_config(cfg)


def test_scale_multiplies_rows(compose_cfg):
    assert dataset_config(compose_cfg("dataset.scale=0.5")).total_rows == 6000


def test_paths_validate(compose_cfg):
    assert paths_config(compose_cfg()).data_dir == "data"


def test_flatten_nested_overrides_win():
    conf = {"spark.sql.x": 1, "spark": {"sql": {"x": 2}}, "flag": True, "none": None}
    assert flatten(conf) == {"spark.sql.x": "2", "flag": "true"}


@pytest.mark.parametrize(
    "argv",
    [["dataset=huge"], ["experiment=nope"], ["-m", "dataset=tiny,huge"], ["+engine=mars"]],
)
def test_unknown_choices_are_rejected(argv):
    with pytest.raises(UserError, match="unknown"):
        check_choices(argv)


def test_known_choices_and_other_overrides_pass():
    check_choices(["dataset=small", "experiment=datagen", "dataset.scale=2", "-m", "dataset=tiny,small"])
