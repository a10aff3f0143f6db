"""The `experiment` group (conf/experiment/): one typed section per experiment task."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, load
from icelab.core.config.values import SittingLabel, WindowName, parse_size


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


def _check_rules(rules: dict[str, Threshold]) -> None:
    for key in rules:
        source, _, stat = key.partition("_")
        if source not in HEALTH_SOURCES or stat not in HEALTH_STATS:
            raise ValueError(
                f"unknown rule '{key}': use <{'|'.join(HEALTH_SOURCES)}>_<{'|'.join(HEALTH_STATS)}>"
            )


HEALTH_YAML = Path(__file__).resolve().parents[3] / "conf" / "experiment" / "manifest_health.yaml"


def manifest_health_rules() -> dict[str, Threshold]:
    """The rules of conf/experiment/manifest_health.yaml: the doctor's default policy, so the two
    give one table the same verdict."""
    rules = (yaml.safe_load(HEALTH_YAML.read_text()) or {}).get("experiment", {}).get("rules") or {}
    return {key: Threshold(**value) for key, value in rules.items()}


class DoctorConfig(_Strict):
    """The `experiment` section of `doctor`: a table of the user's, how to reach it, the policy."""

    name: str = Field(min_length=1)
    task: Literal["doctor"]
    table: str | None = Field(
        default=None,
        description="a table directory or metadata.json (catalog hadoop), or <namespace>.<table>",
    )
    catalog: Literal["hadoop", "hive", "rest"] = "hadoop"
    uri: str | None = Field(default=None, description="thrift://host:9083 (hive), http://host:8181 (rest)")
    warehouse: str | None = Field(default=None, description="the catalog's warehouse")
    windows: list[WindowName] = Field(min_length=1, description="time windows to predict planning for")
    retain: str | None = Field(default=None, description="expire snapshots older than this (7d, 12h)")
    retain_last: int | None = Field(default=None, ge=1)
    small_file: str | None = Field(default=None, description="data files below this size are small")
    target: str | None = Field(default=None, description="manifest target size instead of the advised one")
    rules: dict[str, Threshold] | None = Field(
        default=None, description="null: the rules of conf/experiment/manifest_health.yaml"
    )
    apply: bool = False
    copy_table: bool = Field(
        default=False, alias="copy", description="apply on a scratch copy (icelab.health.scratch)"
    )
    scratch_copy: bool = Field(
        default=True,
        description="measure the rewrite on a scratch copy, the verdict resting on it (false: predicted)",
    )
    keep_copy: bool = Field(default=False, description="leave the scratch copy under results/doctor-copies")
    measure_plans: int = Field(
        default=5,
        ge=0,
        description="timed plans of each window's count query on the table at least, more while the "
        "verdict is undecided (0: none)",
    )
    measure_budget_s: float | None = Field(
        default=60.0,
        gt=0,
        description="seconds the measured plans may take per table state; a window whose plans would "
        "pass it is measured by one cold plan, and none after it is measured (null: no limit)",
    )
    json_out: str | None = Field(
        default=None, alias="json", description="write report.json here too ('-': standard output)"
    )

    @model_validator(mode="after")
    def _check(self) -> DoctorConfig:
        if not self.table:
            raise ValueError("no table given: add table=<table directory, metadata.json or ns.table>")
        for size in (self.small_file, self.target):
            if size is not None:
                parse_size(size)
        if self.retain is not None and not re.fullmatch(r"\d+\s*[smhd]", self.retain.strip()):
            raise ValueError(f"bad retain '{self.retain}': use a whole number with s, m, h or d, e.g. 7d")
        if self.rules is not None:
            _check_rules(self.rules)
        return self

    @property
    def policy_rules(self) -> dict[str, Threshold]:
        """The rules given, else manifest_health's."""
        return self.rules if self.rules is not None else manifest_health_rules()


class CatalogueConfig(_Strict):
    """The `experiment` section of `doctor_catalogue`."""

    name: str = Field(min_length=1)
    task: Literal["doctor_catalogue"]
    windows: list[WindowName] = Field(min_length=1, description="windows the doctor predicts planning for")
    tiny: bool = Field(description="fewer appends per shape (the tests' sizes); the verdicts stay the same")
    shapes: str = Field(
        default="doctor_catalogue",
        pattern=r"^[a-z0-9_]+$",
        description="the shape catalogue: icelab/experiments/<shapes>.yaml",
    )
    measure_plans: int = Field(
        default=0,
        ge=0,
        description="timed plans of each window's count query on each shape as written, beside the "
        "prediction (0: none)",
    )
    measure_warmups: int = Field(default=2, ge=0, description="untimed rounds of plans before the timed ones")
    remeasure: bool = Field(
        default=False,
        description="re-measure every shape's rewrite in a fresh process (`icelab.health.remeasure`)",
    )
    sitting: SittingLabel = None


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


M = TypeVar("M", bound=_Strict)


def _section_loader(model: type[M]) -> Callable[[DictConfig], M]:
    """The function that returns the validated `experiment` section of a config as a `model`."""

    def section(cfg: DictConfig) -> M:
        return load(model, cfg, "experiment")

    section.__doc__ = f"The validated `experiment` section, as a {model.__name__}."
    return section


# The loader of each task's section, as the experiment modules call it.
planning_config = _section_loader(PlanningConfig)
canonical_config = _section_loader(CanonicalConfig)
health_config = _section_loader(HealthConfig)
doctor_config = _section_loader(DoctorConfig)
catalogue_config = _section_loader(CatalogueConfig)
expiry_config = _section_loader(ExpiryConfig)
schema_evolution_config = _section_loader(SchemaEvolutionConfig)
