"""The `engine` group (conf/engine/): where Spark runs and how its catalogs are set up."""

from __future__ import annotations

from typing import Any, Literal

from omegaconf import DictConfig
from pydantic import Field

from icelab.core.config.base import _Strict, load


class EngineConfig(_Strict):
    """Where Spark runs and how its catalogs are set up."""

    name: str
    master: str = Field(min_length=1)
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


def engine_config(cfg: DictConfig) -> EngineConfig:
    """The validated `engine` section."""
    return load(EngineConfig, cfg, "engine")
