"""Typed, validated view of the composed Hydra config.

Hydra composes; pydantic checks ranges and types, so bad input becomes one line naming
the key, the value and what is accepted.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from icelab.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetConfig(_Strict):
    """What the synthetic dataset is and how it is ingested; all of it but name and
    parallelism feeds the dataset hash."""

    name: str
    seed: int
    scale: float = Field(gt=0, description="multiplies rows")
    rows: int = Field(gt=0, description="rows at scale 1")
    span_days: int = Field(gt=0, le=3660)
    end: dt.date = Field(description="the data ends at this UTC midnight (exclusive)")
    partitioning: Literal["day", "hour"]
    commits: int = Field(gt=0, description="ingest batches, one Iceberg snapshot each")
    late_fraction: float = Field(ge=0, le=1)
    late_max_days: float = Field(gt=0)
    clock_skew_fraction: float = Field(ge=0, le=1)
    users: int = Field(gt=0)
    pages: int = Field(gt=0)
    products: int = Field(gt=0)
    popularity_skew: float = Field(ge=1, description="k in index = n * u**k; 1 is uniform")
    compression: Literal["zstd", "snappy", "gzip", "uncompressed"]
    iceberg_properties: dict[str, str]
    parallelism: int = Field(gt=0, description="Spark partitions for generation only")

    @model_validator(mode="after")
    def _fractions(self) -> DatasetConfig:
        if self.late_fraction + self.clock_skew_fraction > 1:
            raise ValueError("late_fraction + clock_skew_fraction must be at most 1")
        if self.total_rows < self.commits:
            raise ValueError(f"rows*scale={self.total_rows} is fewer than commits={self.commits}")
        return self

    @property
    def total_rows(self) -> int:
        """Rows after scaling."""
        return int(round(self.rows * self.scale))


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
    catalog_cache_enabled: bool
    log_level: str
    conf: dict[str, Any]


class PathsConfig(_Strict):
    """Where datasets and results live: local paths or any Hadoop URI."""

    data_dir: str = Field(min_length=1)
    results_dir: str = Field(min_length=1)


def flatten(conf: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """Flatten nested Spark conf ({'spark': {'sql': {...}}}) into dotted string keys.

    Both `spark.sql.x: 1` in YAML and `++engine.conf.spark.sql.x=2` on the command line
    (which Hydra nests) end up as the same key; the nested one wins.
    """
    flat: dict[str, str] = {}
    nested: dict[str, str] = {}
    for key, value in conf.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict):
            nested.update(flatten(value, f"{full}."))
        elif value is not None:
            flat[full] = str(value).lower() if isinstance(value, bool) else str(value)
    return {**flat, **nested}


def _as_dict(cfg: DictConfig, key: str) -> dict[str, Any]:
    node = OmegaConf.select(cfg, key)
    if node is None:
        raise UserError(f"config has no '{key}' section")
    return OmegaConf.to_container(node, resolve=True)  # type: ignore[return-value]


def _one_line(section: str, exc: ValidationError, raw: dict[str, Any]) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    if loc:
        value = raw
        for part in err["loc"]:
            value = value.get(part) if isinstance(value, dict) else None
        return f"invalid config: {section}.{loc}={value!r}: {err['msg']}"
    return f"invalid config: {section}: {err['msg'].removeprefix('Value error, ')}"


def load(model: type[BaseModel], cfg: DictConfig, section: str) -> Any:
    """Validate one config section.

    Raises:
        UserError: with one line naming the bad key and value.
    """
    raw = _as_dict(cfg, section)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise UserError(_one_line(section, exc, raw)) from None


def dataset_config(cfg: DictConfig) -> DatasetConfig:
    """The validated `dataset` section."""
    return load(DatasetConfig, cfg, "dataset")


def engine_config(cfg: DictConfig) -> EngineConfig:
    """The validated `engine` section."""
    return load(EngineConfig, cfg, "engine")


def paths_config(cfg: DictConfig) -> PathsConfig:
    """The validated `paths` section."""
    return load(PathsConfig, cfg, "paths")
