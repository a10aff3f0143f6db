"""Shared fixtures: the real Hydra config, shrunk; one real Spark session; one real tiny
dataset (Parquet + Iceberg) built once per test session in a temporary directory."""

from __future__ import annotations

import contextlib
import copy
import fcntl
import functools
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from icelab.bench.context import Context, open_context
from icelab.core.session import session_settings
from icelab.datagen.build import Built
from tests import jvm_archive, local_fs

REPO = Path(__file__).resolve().parent.parent
# Test modules that start Spark in a child process (`python run.py`, a session in a subprocess):
# marked `spark` with the tests that use the session. (Not run first: xdist's loadfile hands out
# the modules with the most tests first whatever the collection order, unless
# --no-loadscope-reorder, and one suite with that flag and these modules first ran no faster.)
SPARK_MODULES = (
    "test_reliability.py",
    "test_cluster.py",
    "test_object_store.py",
    "test_run.py",
    "test_secrets.py",
    "test_exposure.py",
    "test_copy.py",
)

# The modules that take longest, longest first (`--durations=0`, summed per module), handed out
# first (`--no-loadscope-reorder`: xdist's loadfile otherwise hands out the modules with the
# most tests first). A long module handed out last kept one worker busy while the other had
# nothing left: the single test of test_run_deadline.py, mostly waiting out its deadline, ran
# last and the suite's last minute had one core idle.
LONGEST = (
    "tests/core/test_object_store.py",
    "tests/datagen/test_metadata.py",
    "tests/datagen/test_metadata_shapes.py",
    "tests/test_reliability.py",
    "tests/core/test_run_deadline.py",
    "tests/tools/test_doctor.py",
    "tests/core/test_cluster.py",
    "tests/experiments/test_doctor_catalogue.py",
    "tests/health/test_shapes.py",
    "tests/datagen/test_arrow_build.py",
    "tests/tools/test_doctor_journal.py",
    "tests/experiments/test_snapshot_expiry.py",
    "tests/datagen/test_generate.py",
    "tests/experiments/test_schema_evolution.py",
    "tests/tools/test_doctor_fixed_point.py",
    "tests/experiments/test_canonical.py",
    "tests/datagen/test_dataset.py",
)


TRAINER = pytest.StashKey[jvm_archive.Trainer]()


def pytest_configure(config: pytest.Config) -> None:
    """The controller (not an xdist worker) starts writing the JVMs' class archive if missing,
    unless the run selects no JVM test (`make test-fast`)."""
    if not hasattr(config, "workerinput") and "not spark" not in (config.option.markexpr or ""):
        config.stash[TRAINER] = jvm_archive.Trainer()
        config.stash[TRAINER].start()


def pytest_unconfigure(config: pytest.Config) -> None:
    if TRAINER in config.stash:
        config.stash[TRAINER].stop()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:  # noqa: ANN001
    """Say what became of the JVMs' class archive (its loss shows only as a slower suite)."""
    if TRAINER in config.stash:
        trainer = config.stash[TRAINER]
        trainer.stop()
        terminalreporter.write_line(f"jvm class archive: {trainer.outcome}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that starts a JVM `spark` (it uses the session, `ctx` and every fixture
    built on it, or runs Spark in a child process; `make test-fast` runs the rest). Then order
    the modules: those that start no JVM first, while the class archive is being written (a JVM
    started before it is ready runs without it, and the workers' sessions live all suite long);
    within each group the LONGEST first, in that order, the rest in collection order."""
    for item in items:
        if "ctx" in getattr(item, "fixturenames", ()) or item.path.name in SPARK_MODULES:
            item.add_marker(pytest.mark.spark)
    rank = {name: i for i, name in enumerate(LONGEST)}
    jvm_modules = {item.path for item in items if item.get_closest_marker("spark")}
    items.sort(
        key=lambda item: (
            item.path in jvm_modules,
            rank.get(item.path.relative_to(REPO).as_posix(), len(rank)),
        )
    )


CONF = REPO / "conf"
# Code generation off: on the tests' few thousand rows, compiling each query's Java costs more
# than the compiled code saves, and the answers are the same (Spark's interpreted operators and
# expressions). Whole-stage: a subset of the suite took 187 s with it, 163 s without. Expressions
# (factoryMode, a Spark test setting): each task generated the Java source of the answers'
# checksum (a concat_ws over every column) again before finding it compiled, about 16% of the
# executors' samples in a profile (JFR); five modules took 244 CPU-s with it, 214 without.
# Benchmarks keep both on.
NO_CODEGEN = [
    "++engine.conf.spark.sql.codegen.wholeStage=false",
    "++engine.conf.spark.sql.codegen.factoryMode=NO_CODEGEN",
]


# What `codegen` sets for its block: Spark's defaults, as a benchmark runs.
CODEGEN = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}


def codegen(spark) -> contextlib.AbstractContextManager[None]:  # noqa: ANN001
    """Spark's code generation on for the block, as in a benchmark, then off again (NO_CODEGEN).

    For the tests that generate or hash every row of a dataset: on tiny's 12,000 nested rows the
    generated code pays for its compiling. Hashing the generated rows took 2.0 CPU-s with it
    (2.9 the first time), 6.7 to 7.0 without.
    """
    return session_settings(spark, CODEGEN)


# Every test JVM (the workers' sessions, each `python run.py` child) runs on the tests' few
# thousand rows: C1 only (C2's compiles cost more CPU than they save there), one GC thread, no
# codegen, and the class archive of tests/jvm_archive.py. C1 alone reserves a 48 MB code cache:
# a worker's session filled it, and its sweeper (which scans every compiled method each time
# 0.5% of the cache changes) took about 20 CPU-s of the suite; 256 MB leaves it idle. Turning
# the sweeper off instead (-XX:-MethodFlushing) filled the 48 MB, disabled the compiler and hung
# a Spark job in one run.
#
# Processes by vfork: Hadoop's local file system sets each file's permissions with a `chmod` child
# (Spark's pyspark has no native Hadoop library). LOCAL_FS below removes most of them; the JVMs
# that run without it still start some. Each cost about 5 ms of CPU through Java's default
# posix_spawn and its helper, 3.5 ms by vfork (a micro-benchmark of 1,000 file creations through
# Hadoop's local file system, one JVM each way).
FAST_FLAGS = (
    f"{jvm_archive.BASE_FLAGS} -XX:ReservedCodeCacheSize=256m -Djdk.lang.Process.launchMechanism=VFORK "
    f"{jvm_archive.USE_FLAGS}"
)
# Hadoop's local file system with each permission set by a system call, not a `chmod` child
# (tests/local_fs.py): a micro-benchmark of 1,000 file creations through it, one JVM each way,
# took 1.5 ms of CPU a file against 7.0 ms through Hadoop's own (two children a file: the file
# and its .crc). Empty without javac.
LOCAL_FS = local_fs.install()
FAST_JVM = [f"engine.java_options='{FAST_FLAGS}'", *NO_CODEGEN, *LOCAL_FS]
# Tests share the machine with other work: fewer threads and less memory than a real run. No
# charts unless a test asks for them (`charts=true`): matplotlib's rendering took about a sixth
# of the test process's CPU in the doctor's tests (py-spy).
SHRINK = [
    f"engine.java_options='{FAST_FLAGS}'",
    "engine.master='local[2]'",
    "engine.driver_memory=4g",
    "progress=false",
    "charts=false",
    *NO_CODEGEN,
    *LOCAL_FS,
]


@pytest.fixture(scope="session")
def compose_cfg() -> Callable[..., DictConfig]:
    """Compose the real config with overrides, as `python run.py <overrides>` would."""

    @functools.lru_cache(maxsize=64)
    def _composed(overrides: tuple[str, ...]) -> DictConfig:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            return compose(config_name="config", overrides=[*SHRINK, *overrides])

    def _compose(*overrides: str) -> DictConfig:
        # About 90 ms of CPU a composition; many tests compose the same overrides. A copy each:
        # tests change their config.
        return copy.deepcopy(_composed(overrides))

    return _compose


def shared_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A directory both xdist workers see (the run's common temporary root), or this run's own."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return tmp_path_factory.mktemp(name)
    path = tmp_path_factory.getbasetemp().parent / name
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Datasets built by the tests, shared by the workers: icelab's own dataset locks make one
    worker build tiny while the other waits and reuses it (what two runs at once do)."""
    return shared_dir(tmp_path_factory, "data")


@pytest.fixture(scope="session")
def micro_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory for the micro dataset (tests/reliability.py's MICRO) of the modules that
    only read it (or copy it): the first run that needs it builds it under icelab's dataset
    locks, the others (in either worker) wait and reuse it."""
    return shared_dir(tmp_path_factory, "micro-data")


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Results written by the tests."""
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A results directory of the test module's own (a module may define its own `results`)."""
    return tmp_path_factory.mktemp(f"{request.module.__name__.rsplit('.', 1)[-1]}-results")


@pytest.fixture(scope="session")
def compose_run(compose_cfg, data_dir: Path, results_dir: Path) -> Callable[..., DictConfig]:
    """Compose an experiment's config on tiny, writing under the tests' temporary directories."""

    def _compose(*overrides: str) -> DictConfig:
        return compose_cfg(
            "dataset=tiny", *overrides, f"paths.data_dir={data_dir}", f"paths.results_dir={results_dir}"
        )

    return _compose


@pytest.fixture(scope="session")
def tiny_cfg(compose_cfg, data_dir: Path, results_dir: Path) -> DictConfig:
    """The tiny dataset's config, writing under the tests' temporary directories."""
    return compose_cfg("dataset=tiny", f"paths.data_dir={data_dir}", f"paths.results_dir={results_dir}")


@pytest.fixture(scope="session")
def ctx(tiny_cfg: DictConfig) -> Iterator[Context]:
    """The one Spark session of the test run, with the tiny config."""
    context = open_context(tiny_cfg)
    yield context
    context.spark.stop()


@pytest.fixture(scope="session")
def tiny(ctx: Context) -> Built:
    """The tiny dataset, built (and verified) once."""
    return ctx.dataset()


# The smoke experiment, shrunk: 3 queries x 3 windows x 4 variants x 3 rounds on tiny.
SHRINK_RUN = [
    "experiment=smoke",
    "experiment.windows=[1h,1d,7d]",
    "experiment.ratio=[7d,1d]",
    "protocol.warmups=1",
    "protocol.repetitions=2",
    "protocol.executions=1",
    "protocol.overhead_pairs=1",
    "profile=[as_ingested,rewrite_16kb,aggregate_pushdown]",
    "charts=true",  # the chart tests read this run's charts
]


@pytest.fixture(scope="session")
def planning_run(compose_run, tiny: Built, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real planning run's directory (measurements, env, charts), made once for both workers;
    the tests only read it (a test that redraws works on a copy)."""
    from icelab.experiments import planning

    shared = shared_dir(tmp_path_factory, "planning-run")
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the run, then reads it
        made = shared / "run_dir"
        if not made.is_file():
            made.write_text(str(planning.run(compose_run(*SHRINK_RUN))))
        return Path(made.read_text())


# The smoke experiment through `python run.py`, smallest: one query, two windows, one round.
SMOKE_PY = [
    *FAST_JVM,
    "experiment=smoke",
    "experiment.queries=[count_window]",
    "experiment.windows=[1h,1d]",
    "experiment.ratio=[1d,1h]",
    "protocol.warmups=0",
    "protocol.repetitions=1",
    "protocol.overhead_pairs=0",
    "engine.master='local[2]'",
    "engine.driver_memory=2g",
    "progress=false",
]


def run_py(
    *overrides: str, env: dict[str, str] | None = None, timeout: int = 600
) -> subprocess.CompletedProcess:
    """`python run.py <overrides>` as a user runs it, from the repository root, output captured."""
    return subprocess.run(
        [sys.executable, str(REPO / "run.py"), *overrides],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def start_run_py(*overrides: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """`python run.py <overrides>` started and not waited for, stdout and stderr piped as text."""
    return subprocess.Popen(
        [sys.executable, str(REPO / "run.py"), *overrides],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def namespace(spark, *parts: str):  # noqa: ANN001, ANN201 (a SparkSession, a Java String[])
    """A Java String[] for py4j calls such as `Identifier.of(namespace, name)`."""
    array = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(parts))
    for i, part in enumerate(parts):
        array[i] = part
    return array
