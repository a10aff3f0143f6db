"""What every experiment starts from: validated config, checked prerequisites, the one
Spark session, and its dataset (reused from cache or built)."""

from __future__ import annotations

import json
import logging
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig
from pyspark import SparkContext
from pyspark.sql import SparkSession

from icelab.bench.recorder import recover
from icelab.core import cluster, locks, object_store, provenance, run_state, storage
from icelab.core.config import (
    DatasetConfig,
    EngineConfig,
    PathsConfig,
    StorageConfig,
    dataset_config,
    engine_config,
    paths_config,
    protocol_config,
    storage_config,
    verify_config,
)
from icelab.core.errors import UserError
from icelab.core.preflight import check_java
from icelab.core.results import new_run_dir, write_config, write_json
from icelab.core.session import executors, get_session, session_conf
from icelab.datagen.build import Built, ensure, verify
from icelab.datagen.copy import missing_source
from icelab.datagen.dataset import Dataset
from icelab.datagen.verify import Verification

log = logging.getLogger(__name__)
# The kind of engine a master URL names (env.json's engine.kind).
ENGINE_KINDS = [("local", "local"), ("spark://", "standalone"), ("yarn", "yarn"), ("k8s://", "kubernetes")]


@dataclass
class Context:
    """A run's validated settings and live session."""

    cfg: DictConfig
    dataset_cfg: DatasetConfig
    engine: EngineConfig
    paths: PathsConfig
    spark: SparkSession
    storage: StorageConfig
    dataset_dir: str | None = None  # where the dataset is read, when not paths.data_dir
    # The harness's commit and state when the run began: the code it runs was loaded then. A file
    # edited while a long run works must not mark the run dirty, nor an edit undone make it clean.
    git: dict[str, Any] = field(default_factory=provenance.git_state)

    def _verify_options(self) -> dict[str, Any]:
        verify_cfg = verify_config(self.cfg)
        return {
            "with_duckdb": verify_cfg.duckdb,
            "progress": bool(self.cfg.progress),
            "duckdb_memory": verify_cfg.duckdb_memory,
            "readers_per_day": verify_cfg.readers_per_day,
        }

    def dataset(self) -> Built:
        """The run's dataset, reused when its config is unchanged (`force=true` rebuilds): under
        paths.data_dir (copied from paths.copy_from when that holds it), or built or reused under
        `dataset_dir` and never copied, for a run that reads it there."""
        where, copy_from = (
            (self.dataset_dir, None) if self.dataset_dir else (self.paths.data_dir, self.paths.copy_from)
        )
        return ensure(
            self.spark,
            Dataset.of(self.dataset_cfg, where),
            self.engine,
            force=bool(self.cfg.force),
            copy_from=copy_from,
            **self._verify_options(),
        )

    def verify(self, built: Built) -> Verification:
        """The dataset's verification: the build's own when it was built just now and read as many
        days as asked, else a fresh one."""
        options = self._verify_options()
        own = built.verification
        if own is not None and (own.every_day or options["readers_per_day"] == 2):
            return own
        return verify(self.spark, built.dataset, **options)

    def reopen(self) -> SparkSession:
        """A new session, as the run's first was opened, after a measurement ended the driver JVM
        (`protocol.timeout_grace_s`). The template dataset's tables are registered again; the
        caller registers anything else it registered in the old session.
        """
        store = object_store.active()
        clusters = Path(self.paths.results_dir) / "clusters"
        # PySpark's new SparkContext installs its own SIGINT handler, which raises inside the
        # next py4j call: the caller's (a run's Ctrl-C handler) is put back at once.
        main = threading.current_thread() is threading.main_thread()
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
        self.spark = get_session(self.engine, clusters, store.spark_conf() if store else None)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        self.dataset()
        return self.spark

    def catalog_conf(self) -> dict[str, str]:
        """Every `spark.sql.catalog.*` setting of the live session, the runtime ones included."""
        rows = self.spark.sql("SET").collect()
        return {r.key: r.value for r in rows if r.key.startswith("spark.sql.catalog.")}

    def engine_record(self) -> dict[str, Any]:
        """Where the session runs: engine, master URL, the executors that registered (id,
        host:port, cores) and, for the standalone cluster icelab started, its workers, cores,
        memory, processes and log directory."""
        master = self.spark.sparkContext.master
        started = cluster.running()
        kind = next((k for prefix, k in ENGINE_KINDS if master.startswith(prefix)), master.split(":", 1)[0])
        record: dict[str, Any] = {
            "name": self.engine.name,
            "kind": "standalone (started by icelab)" if started else kind,
            "master": master,
            "executors": executors(self.spark),
        }
        if started is not None:
            record["cluster"] = started.record()
        return record

    def env(self, built: Built | None = None) -> dict[str, Any]:
        """Machine, versions, git state, engine, Spark settings (redacted) and dataset identity."""
        store = object_store.active()
        conf = session_conf(
            self.engine, self.spark.sparkContext.master, store.spark_conf() if store else None
        )
        env: dict[str, Any] = {
            "machine": provenance.machine(),
            "versions": provenance.versions(iceberg_jar=conf["spark.jars"].split(",")[0])
            | provenance.spark_versions(self.spark),
            "git": self.git,
            "engine": provenance.redact(self.engine_record()),
            "spark_conf": provenance.redact(conf),
            # Catalogs registered at runtime (one per dataset): type, warehouse, cache flags.
            "catalogs": provenance.redact(self.catalog_conf()),
            # Where the data lives: kind, endpoint, added latency and how (never a key).
            "storage": provenance.redact(object_store.record(self.storage, self.paths.data_dir)),
        }
        if built is not None:
            env["dataset"] = {
                "name": built.dataset.config.name,
                "hash": built.dataset.hash,
                "uri": built.dataset.uri,
                "created_utc": built.info.get("created_utc"),
                "iceberg_table_properties": built.info.get("iceberg_table_properties"),
                # On a store, what its build sent through S3A, by phase (none when reused).
                "s3a_requests": built.info.get("s3a_requests") if not built.reused else None,
            }
        return env

    def new_run(self, experiment: str, built: Built | None = None) -> Path:
        """A results directory holding env.json, the resolved config and run.json (running).

        Runs of killed processes under the same results directory are marked interrupted first
        (with their measurements recovered), so none is left looking like a live run.
        """
        for dead in run_state.reap(Path(self.paths.results_dir), salvage=recover):
            log.warning("marked %s interrupted: its process ended without closing it", dead)
        run_dir = new_run_dir(self.paths.results_dir, experiment)
        run_state.start(run_dir, experiment=experiment, task=str(self.cfg.experiment.task))
        store = object_store.active()
        if store is not None and store.proxy is not None:
            run_state.at_finish(run_dir, store.requests_since(store.requests()))
        write_json(run_dir / "env.json", self.env(built))
        write_config(run_dir / "config.yaml", self.cfg)
        return run_dir


def lock_wait(cfg: DictConfig) -> float:
    """The run's `lock_wait_s`: seconds to wait for a dataset another run builds or rewrites.

    Raises:
        UserError: for a negative or non-numeric value.
    """
    value = cfg.get("lock_wait_s", locks.wait_s)
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if seconds < 0:
        raise UserError(f"lock_wait_s={value!r}: use a number of seconds >= 0 (0: refuse, do not wait)")
    return seconds


def isolation(engine: EngineConfig, paths: PathsConfig, store_cfg: StorageConfig) -> tuple[Path, ...]:
    """With engine.isolate_workers, the driver's directories its workers must not see (results,
    the store's own files); nothing otherwise.

    Raises:
        UserError: the data (or the copy's source) on the driver's local disk, which the workers
            cannot reach; or no mount namespace to be had here (`cluster.check_isolation`).
    """
    if not engine.isolate_workers:
        return ()
    for key, path in (("paths.data_dir", paths.data_dir), ("paths.copy_from", paths.copy_from)):
        if path and storage.local_path(storage.to_uri(path)) is not None:
            raise UserError(
                f"engine.isolate_workers=true: the workers share no disk with the driver, so they cannot "
                f"read {key}={path} on its local disk; put the data on shared storage (storage=object)"
            )
    cluster.check_isolation()
    hidden = [
        paths.results_dir,
        store_cfg.dir if store_cfg.kind == "object" and not store_cfg.endpoint else None,
    ]
    return tuple(Path(p).resolve() for p in hidden if p and Path(p).is_dir())


def open_context(cfg: DictConfig, data: bool = True, dataset_dir: str | None = None) -> Context:
    """Validate everything the user typed, then start Spark (the slow part) last.

    `data=False` for a task that uses no dataset (`doctor`): the data directory is not checked
    (nor created). `dataset_dir`: a local data directory the run reads its dataset from instead
    of paths.data_dir (built there if missing, never copied: the template of metadata states
    built on a store); checked as the data directory is.
    """
    git = provenance.git_state()  # before anything runs: what the run's code is
    ds, engine, paths = dataset_config(cfg), engine_config(cfg), paths_config(cfg)
    if "protocol" in cfg:
        run_state.deadline(protocol_config(cfg).deadline_s)
    store_cfg = storage_config(cfg)
    verify_config(cfg)  # a bad verify section fails here, before a session starts
    locks.wait_s = lock_wait(cfg)
    locks.owner = f"experiment {cfg.experiment.name} on dataset {ds.name}"
    check_java()
    dirs = [("paths.data_dir", paths.data_dir)] if data else []
    if store_cfg.kind == "object" and not store_cfg.endpoint:
        dirs = [("storage.dir", store_cfg.dir)]  # the data is in RGW, whose files are there
    if dataset_dir:
        dirs.append(("paths.copy_from", dataset_dir))
    for key, path in [*dirs, ("paths.results_dir", paths.results_dir)]:
        storage.check_local_dir(storage.to_uri(path), key, paths.min_free_gb)
    if data and paths.copy_from and not dataset_dir:
        problem = missing_source(paths.copy_from, Dataset.of(ds, paths.data_dir))
        if problem:
            raise UserError(problem)
    private = isolation(engine, paths, store_cfg)
    store = object_store.open_store(store_cfg, paths.data_dir)
    # A standalone cluster icelab starts logs beside the runs: the run directory comes later.
    clusters = Path(paths.results_dir) / "clusters"
    spark = get_session(engine, clusters, store.spark_conf() if store else None, private)
    run_state.on_deadline(lambda: SparkContext._active_spark_context.cancelAllJobs())
    if store is not None:
        storage.check_store(spark, store.data_dir, store.spark_endpoint)
    return Context(cfg, ds, engine, paths, spark, store_cfg, dataset_dir, git)


def dump(data: Any) -> str:
    """Pretty JSON for the console."""
    return json.dumps(data, indent=2, default=str)
