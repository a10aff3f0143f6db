"""The `experiment` group (conf/experiment/): one typed section per experiment task."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, load
from icelab.core.config.values import WindowName, parse_size


class PlanningConfig(_Strict):
    """The `experiment` section of a planning experiment (manifest_8mb, manifest_sweep, smoke)."""

    name: str = Field(min_length=1)
    task: Literal["planning"]
    parquet: bool = Field(description="include the plain Parquet table as a variant")
    queries: list[str] = Field(min_length=1)
    windows: list[WindowName] = Field(min_length=1)
    end: dt.date | None = Field(default=None, description="windows end at this UTC midnight")
    ratio: tuple[WindowName, WindowName] = Field(description="growth: median(first) / median(second)")

    @model_validator(mode="after")
    def _ratio(self) -> PlanningConfig:
        if self.ratio[0] == self.ratio[1]:
            raise ValueError(f"ratio needs two different windows, got {list(self.ratio)}")
        missing = [w for w in self.ratio if w not in self.windows]
        if missing:
            raise ValueError(f"ratio window {missing[0]} is not among the windows {self.windows}")
        return self


class CanonicalConfig(_Strict):
    """The `experiment` section of the canonical-queries experiment."""

    name: str = Field(min_length=1)
    task: Literal["canonical"]
    parquet: bool = Field(description="include the plain Parquet table (Spark's defaults) as baseline")
    queries: list[str] = Field(min_length=1, description="query ids or their qNN prefixes")
    end: dt.date | None = Field(default=None, description="windows end at this UTC midnight")
    initial: str = Field(description="the setup of the study's Figure 8")
    optimized: str = Field(description="the setup of the study's Figure 9")


class Threshold(_Strict):
    """A health rule's two levels: above `advise` a rewrite is advised, above `need` needed."""

    advise: float = Field(ge=0)
    need: float = Field(ge=0)

    @model_validator(mode="after")
    def _order(self) -> Threshold:
        if self.advise > self.need:
            raise ValueError(f"advise ({self.advise}) is above need ({self.need})")
        return self


HEALTH_SOURCES = ("exact", "bounds", "span")
HEALTH_STATS = ("min", "max", "mean", "median", "stdev", "p60", "p90", "p99")


class HealthConfig(_Strict):
    """The `experiment` section of `manifest_health`: what to rewrite to, and the policy."""

    name: str = Field(min_length=1)
    task: Literal["manifest_health"]
    rewrite_target: str | None = Field(
        default=None, description="rewrite_manifests target; null reports only"
    )
    rules: dict[str, Threshold] = Field(
        min_length=1, description="'<exact|bounds|span>_<statistic>' -> levels"
    )

    @model_validator(mode="after")
    def _check(self) -> HealthConfig:
        if self.rewrite_target is not None:
            parse_size(self.rewrite_target)
        for key in self.rules:
            source, _, stat = key.partition("_")
            if source not in HEALTH_SOURCES or stat not in HEALTH_STATS:
                raise ValueError(
                    f"unknown rule '{key}': use <{'|'.join(HEALTH_SOURCES)}>_<{'|'.join(HEALTH_STATS)}>"
                )
        return self


class ExpiryConfig(_Strict):
    """The `experiment` section of `snapshot_expiry`."""

    name: str = Field(min_length=1)
    task: Literal["snapshot_expiry"]
    commits_per_day: int = Field(gt=0, description="commits per simulated day (the dataset's batches)")
    retain_days: int = Field(gt=0, description="expire snapshots older than this many simulated days")
    probe_window: WindowName = Field(description="planning probe: count_window over this window")
    probe_repetitions: int = Field(gt=0)
    keep_table: bool = Field(
        description="keep the scratch table after the run (it is dropped with its files)"
    )


class SchemaEvolutionConfig(_Strict):
    """The `experiment` section of `schema_evolution`."""

    name: str = Field(min_length=1)
    task: Literal["schema_evolution"]
    rows: int = Field(gt=0, description="old rows per scenario table, written before the change")
    commits: int = Field(gt=0, description="commits the old rows arrive in")
    new_rows: int = Field(gt=0, description="rows written after the change")
    scenarios: list[str] = Field(min_length=1, description="scenario names to run, in order")
    keep_tables: bool = Field(description="keep the scratch tables and Parquet copies after the run")

    @model_validator(mode="after")
    def _rows(self) -> SchemaEvolutionConfig:
        if self.rows < self.commits:
            raise ValueError(f"rows ({self.rows}) is fewer than commits ({self.commits})")
        return self


def planning_config(cfg: DictConfig) -> PlanningConfig:
    """The validated `experiment` section of a planning experiment."""
    return load(PlanningConfig, cfg, "experiment")


def canonical_config(cfg: DictConfig) -> CanonicalConfig:
    """The validated `experiment` section of the canonical experiment."""
    return load(CanonicalConfig, cfg, "experiment")


def health_config(cfg: DictConfig) -> HealthConfig:
    """The validated `experiment` section of `manifest_health`."""
    return load(HealthConfig, cfg, "experiment")


def expiry_config(cfg: DictConfig) -> ExpiryConfig:
    """The validated `experiment` section of `snapshot_expiry`."""
    return load(ExpiryConfig, cfg, "experiment")


def schema_evolution_config(cfg: DictConfig) -> SchemaEvolutionConfig:
    """The validated `experiment` section of `schema_evolution`."""
    return load(SchemaEvolutionConfig, cfg, "experiment")
