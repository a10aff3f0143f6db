"""The `engine` group (conf/engine/): where Spark runs and how its catalogs are set up."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from omegaconf import DictConfig
from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from icelab.core.config.base import _Strict, flatten, load
from icelab.core.config.values import memory_mib

# Spark refuses an executor below 450 MiB (its reserved 300 MiB over 1.5).
MIN_EXECUTOR_MIB = 450


def _memory(text: str) -> str:
    memory_mib(text)
    return text


# YAML reads a bare number as an int: it reaches the unit check as text, not a type error.
Memory = Annotated[
    str, BeforeValidator(lambda v: str(v) if isinstance(v, int) else v), AfterValidator(_memory)
]
Port = Annotated[int, Field(ge=1, le=65535)]


def _mib(setting: str) -> int:
    """A Spark memory setting in MiB; a bare number is MiB there (`spark.executor.memory`)."""
    return memory_mib(f"{setting}m" if setting.isdigit() else setting)


class EngineConfig(_Strict):
    """Where Spark runs and how its catalogs are set up."""

    name: str
    # None only with engine=standalone: icelab starts the cluster and uses its master.
    master: str | None = Field(min_length=1)
    # engine=standalone (conf/engine/standalone.yaml): the cluster icelab starts on loopback
    # (before executor_memory, which follows worker_memory there: a bad value is named as typed).
    workers: int | None = Field(default=None, ge=1, le=64)
    worker_cores: int | None = Field(default=None, ge=1)
    worker_memory: Memory | None = None
    master_port: Port | None = None
    master_webui_port: Port | None = None
    daemon_java_options: str = Field(default="", description="JVM flags of the master and workers")
    start_timeout_s: float = Field(default=60, gt=0)
    # Workers in a mount namespace of their own, sharing no disk with the driver (docs/cluster.md).
    isolate_workers: bool = False
    app_name: str
    driver_memory: str = Field(pattern=r"^\d+[kmgtKMGT]?$")
    executor_memory: str | None = Field(default=None, pattern=r"^\d+[kmgtKMGT]?$")
    iceberg_jar: str
    catalog_type: Literal["hadoop", "hive", "rest"]
    catalog_uri: str | None = None
    iceberg_metadata_cache: bool = Field(description="catalog cache-enabled and io.manifest.cache-enabled")
    log_level: str
    java_options: str = Field(default="", description="extra driver JVM flags, after icelab's own")
    conf: dict[str, Any]

    @property
    def standalone(self) -> bool:
        """engine=standalone: a standalone cluster, started by icelab unless `master` names one."""
        return self.workers is not None

    @property
    def starts_cluster(self) -> bool:
        """icelab starts the master and workers itself (engine=standalone without a master)."""
        return self.standalone and self.master is None

    @model_validator(mode="after")
    def _cluster_fits(self) -> EngineConfig:
        if not self.standalone:
            if self.master is None:
                raise ValueError(
                    "master is empty: name one (local[*], spark://host:port, yarn, k8s://...) "
                    "or use engine=standalone to start a cluster on this machine"
                )
            if self.isolate_workers:
                raise ValueError("isolate_workers needs engine=standalone (icelab starts the workers)")
            return self
        if self.master is not None:
            if self.isolate_workers:
                raise ValueError(
                    "isolate_workers needs master=null: icelab isolates only the workers it starts"
                )
            if not self.master.startswith("spark://"):
                raise ValueError(
                    f"engine=standalone takes master=null (icelab starts a cluster) or a standalone "
                    f"master spark://host:port, not {self.master!r}"
                )
            return self
        if self.worker_cores is None or self.worker_memory is None:
            raise ValueError("engine=standalone needs worker_cores and worker_memory")
        if self.master_port is not None and self.master_port == self.master_webui_port:
            raise ValueError(f"master_port and master_webui_port are both {self.master_port}")
        executor = self.executor_memory or "1g"  # Spark's default
        if _mib(executor) < MIN_EXECUTOR_MIB:
            raise ValueError(
                f"executor_memory {executor} is below Spark's least, {MIN_EXECUTOR_MIB}m "
                "(unless set, it follows worker_memory)"
            )
        if _mib(executor) > memory_mib(self.worker_memory):
            raise ValueError(
                f"executor_memory {executor} exceeds worker_memory {self.worker_memory}: "
                "no worker could start an executor"
            )
        cores = flatten(self.conf).get("spark.executor.cores")
        if cores is not None and cores.isdigit() and int(cores) > self.worker_cores:
            raise ValueError(
                f"spark.executor.cores {cores} exceeds worker_cores {self.worker_cores}: "
                "no worker could start an executor"
            )
        return self


def engine_config(cfg: DictConfig) -> EngineConfig:
    """The validated `engine` section."""
    return load(EngineConfig, cfg, "engine")
