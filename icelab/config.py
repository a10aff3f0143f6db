"""Typed, validated view of the composed Hydra config.

Hydra composes; pydantic checks ranges and types, so bad input becomes one line naming
the key, the value and what is accepted.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from typing import Annotated, Any, Literal

from omegaconf import DictConfig, OmegaConf
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from icelab.errors import UserError

WINDOW_RULE = "use a positive number of hours or days (1h, 7d) or 'full'"
_UNITS = {"h": dt.timedelta(hours=1), "d": dt.timedelta(days=1)}


def window_length(name: str) -> dt.timedelta | None:
    """The length of a window name (`1h`, `7d`, `180d`); None for `full`, the data's whole span.

    Raises:
        ValueError: for anything but a positive whole number of hours or days, or `full`.
    """
    if name == "full":
        return None
    match = re.fullmatch(r"(\d+)([hd])", name)
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"bad window '{name}': {WINDOW_RULE}")
    return int(match.group(1)) * _UNITS[match.group(2)]


def _window_name(name: str) -> str:
    window_length(name)
    return name


# A window name, checked where it is typed: before any rule that compares windows.
WindowName = Annotated[str, AfterValidator(_window_name)]


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
    iceberg_metadata_cache: bool = Field(description="catalog cache-enabled and io.manifest.cache-enabled")
    log_level: str
    conf: dict[str, Any]


_SIZE = re.compile(r"^(\d+)\s*([kmg]?)b?$", re.I)
_UNIT = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str) -> int:
    """`8MB`, `256kb`, `1g`, `4096` -> bytes (binary units, as Iceberg's size properties).

    Raises:
        ValueError: for anything else.
    """
    match = _SIZE.fullmatch(str(text).strip())
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"bad size '{text}': use a positive number with KB, MB or GB, e.g. 8MB")
    return int(match.group(1)) * _UNIT[match.group(2).lower()]


class ProfileConfig(_Strict):
    """One Iceberg table state (`conf/profile/`): a manifest layout and session settings.

    Attributes:
        description: what the profile shows.
        manifest_target_size: rewrite_manifests target (`8MB`); null keeps the ingested layout.
        expire_snapshots: expire every snapshot but the current one (metadata only).
        spark_conf: session settings applied only while this profile's queries run.
    """

    description: str
    manifest_target_size: str | None = None
    expire_snapshots: bool = False
    spark_conf: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _size(self) -> ProfileConfig:
        if self.manifest_target_size is not None:
            parse_size(self.manifest_target_size)
        return self

    @property
    def target_bytes(self) -> int | None:
        """Target manifest size in bytes, or None for the ingested layout."""
        return None if self.manifest_target_size is None else parse_size(self.manifest_target_size)


class ProtocolConfig(_Strict):
    """How often each query runs and what counts as a stable figure."""

    warmups: int = Field(ge=0, description="rounds first, recorded with warmup=true, never in medians")
    warmups_execute: bool = Field(description="warm-up rounds also run each query to completion")
    repetitions: int = Field(ge=1, description="measured rounds")
    executions: int = Field(ge=0, description="measured rounds that also run the query to completion")
    unstable_iqr: float = Field(gt=0, description="flag a median when IQR / median exceeds this")
    overhead_pairs: int = Field(ge=0, description="measure() vs plain collect pairs per variant and query")
    overhead_window: WindowName
    warm_cache: bool = Field(description="read the dataset's local files once before measuring")

    @model_validator(mode="after")
    def _executions(self) -> ProtocolConfig:
        if self.executions > self.repetitions:
            raise ValueError(f"executions ({self.executions}) exceeds repetitions ({self.repetitions})")
        return self


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


class SetupConfig(_Strict):
    """One reading setup of the canonical experiment (`conf/setup/`): an Iceberg table state
    and the session settings its queries run under.

    Attributes:
        description: what the setup stands for.
        profile: the table state, a profile selected in the `profile` group.
        spark_conf: settings applied only while this setup's Iceberg queries run.
    """

    description: str
    profile: str = Field(min_length=1)
    spark_conf: dict[str, Any] = Field(default_factory=dict)


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


class PathsConfig(_Strict):
    """Where datasets and results live: local paths or any Hadoop URI."""

    data_dir: str = Field(min_length=1)
    results_dir: str = Field(min_length=1)
    min_free_gb: float = Field(ge=0, description="least free space on a local data or results disk")


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
    if not isinstance(node, DictConfig):
        raise UserError(f"invalid config: {key}={node!r}: expected a section of keys, as in conf/")
    return OmegaConf.to_container(node, resolve=True)  # type: ignore[return-value]


def _one_line(section: str, exc: ValidationError, raw: dict[str, Any]) -> str:
    err = exc.errors()[0]
    # Name the key as typed: a list item's error shows the whole list (`windows=['0h']`).
    parts = list(itertools.takewhile(lambda part: isinstance(part, str), err["loc"]))
    loc = ".".join(parts)
    if loc:
        value = raw
        for part in parts:
            value = value.get(part) if isinstance(value, dict) else None
        return f"invalid config: {section}.{loc}={value!r}: {err['msg'].removeprefix('Value error, ')}"
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


def profile_configs(cfg: DictConfig) -> dict[str, ProfileConfig]:
    """The validated profiles selected in the `profile` group, by name."""
    raw = _as_dict(cfg, "profile")
    return {name: load(ProfileConfig, cfg, f"profile.{name}") for name in raw}


def setup_configs(cfg: DictConfig) -> dict[str, SetupConfig]:
    """The validated setups selected in the `setup` group, by name."""
    raw = _as_dict(cfg, "setup")
    return {name: load(SetupConfig, cfg, f"setup.{name}") for name in raw}


def canonical_config(cfg: DictConfig) -> CanonicalConfig:
    """The validated `experiment` section of the canonical experiment."""
    return load(CanonicalConfig, cfg, "experiment")


def protocol_config(cfg: DictConfig) -> ProtocolConfig:
    """The validated `protocol` section."""
    return load(ProtocolConfig, cfg, "protocol")


def planning_config(cfg: DictConfig) -> PlanningConfig:
    """The validated `experiment` section of a planning experiment."""
    return load(PlanningConfig, cfg, "experiment")


def health_config(cfg: DictConfig) -> HealthConfig:
    """The validated `experiment` section of `manifest_health`."""
    return load(HealthConfig, cfg, "experiment")


def expiry_config(cfg: DictConfig) -> ExpiryConfig:
    """The validated `experiment` section of `snapshot_expiry`."""
    return load(ExpiryConfig, cfg, "experiment")


def schema_evolution_config(cfg: DictConfig) -> SchemaEvolutionConfig:
    """The validated `experiment` section of `schema_evolution`."""
    return load(SchemaEvolutionConfig, cfg, "experiment")


def paths_config(cfg: DictConfig) -> PathsConfig:
    """The validated `paths` section."""
    return load(PathsConfig, cfg, "paths")
