"""The `meta` group (conf/meta/) and the `metadata_scale` experiment: Iceberg table states made of
metadata only (no data files), at production file counts, for planning-only measurements."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, as_dict, load
from icelab.core.config.values import SittingLabel, WindowName, parse_size

IcebergMode = Literal["local", "distributed", "local_cache"]
ListingMode = Literal["serial", "parallel"]
Partitioning = Literal["day", "hour", "month", "identity_day", "bucket_day"]
SchemaShape = Literal["wide", "narrow"]
Deletes = Literal["none", "position"]


class MetaSizeConfig(_Strict):
    """One metadata-scale state (`conf/meta/<name>.yaml`).

    Attributes:
        data_files: data-file entries in the table (and placeholder files on the Parquet side).
        manifests: manifests as ingested, one per ingest batch.
        manifests_per_commit: as-ingested manifests per Iceberg commit (snapshots = manifests /
            this); more than one keeps metadata.json small when there are thousands.
        days: daily partitions, ending at `end`.
        rewrites: layout name -> manifest target size, laid out as rewrite_manifests lays them.
        parquet: also write the Hive `date=` tree of placeholder files.
        modes: Iceberg planning modes measured; listing: Parquet listing modes measured.
        windows: windows measured at this size; null: the experiment's.
        repetitions, warmups: rounds at this size (planning only).
        single_round_entries: a cell whose plan reads more manifest entries than this (known
            before measuring, from the layout's manifests) is measured once, with no warm-up:
            at 10M such a plan takes minutes. The other cells get `warmups` and `repetitions`.
            null: every cell gets them.
        heap: the builder JVM's heap.
        fresh_jvm: measure each cell of this state in a driver JVM of its own (a new session
            before each measurement), so no cell inherits the heap earlier plans grew.
        measured_layouts: the Iceberg layouts measured; null: every one. The others are still
            built (a rewrite is sized from the as-ingested layout's bytes per entry).
        partitioning: the Iceberg tables' partition spec: days, hours or months of `timestamp`,
            or two fields, a category (identity) or a bucket of the id, then the day.
        columns: `schema` in the YAML: `wide` (the template's schema) or `narrow` (about 10 of
            its columns, so entries carry statistics for those only).
        deletes: `position`: merge-on-read position-delete files over the latest days, committed
            after the data, so a plan reads delete manifests and matches delete files.
    """

    data_files: int = Field(gt=0)
    manifests: int = Field(gt=0)
    manifests_per_commit: int = Field(default=1, gt=0)
    days: int = Field(default=180, gt=0)
    rewrites: dict[str, str] = Field(default_factory=dict)
    parquet: bool = True
    modes: list[IcebergMode] = Field(min_length=1)
    listing: list[ListingMode] = Field(default_factory=lambda: ["serial", "parallel"])
    windows: list[WindowName] | None = None
    repetitions: int = Field(default=3, gt=0)
    warmups: int = Field(default=1, ge=0)
    single_round_entries: int | None = Field(default=None, gt=0)
    heap: str = Field(default="4g", pattern=r"^\d+[kmgKMG]$")
    fresh_jvm: bool = False
    measured_layouts: list[str] | None = Field(default=None, min_length=1)
    partitioning: Partitioning = "day"
    # `schema` would shadow pydantic's BaseModel.schema: the YAML key is an alias.
    columns: SchemaShape = Field(default="wide", alias="schema")
    deletes: Deletes = "none"

    @property
    def shaped(self) -> bool:
        """Whether the state's shape differs from icelab's own table (day partitions, wide schema)."""
        return (self.partitioning, self.columns, self.deletes) != ("day", "wide", "none")

    @model_validator(mode="after")
    def _check(self) -> MetaSizeConfig:
        if self.shaped and self.parquet:
            raise ValueError(
                f"partitioning={self.partitioning} schema={self.columns} deletes={self.deletes}: a shaped "
                "state is Iceberg only (its Parquet side would be the day tree of icelab's own table); "
                "set parquet: false"
            )
        for name, size in self.rewrites.items():
            if not name.isidentifier() or name == "as_ingested":
                raise ValueError(f"rewrite layout name '{name}': use a name like rewrite_8mb")
            parse_size(size)
        unknown = set(self.measured_layouts or []) - {"as_ingested", *self.rewrites}
        if unknown:
            raise ValueError(
                f"measured_layouts {sorted(unknown)}: not as_ingested or a rewrite of this state"
            )
        if self.data_files < self.manifests * self.days:
            raise ValueError(
                f"{self.data_files} data files over {self.manifests} manifests x {self.days} days: "
                "as ingested every manifest spans nearly every day, so give at least manifests x days files"
            )
        return self


class MetadataScaleConfig(_Strict):
    """The `experiment` section of `metadata_scale` (and of `costmodel_calibrate`, which runs it)."""

    name: str = Field(min_length=1)
    task: Literal["metadata_scale", "costmodel_calibrate"]
    query: str = Field(min_length=1)
    windows: list[WindowName] = Field(min_length=1)
    end: dt.date = Field(description="the last day of every state ends at this UTC midnight")
    parquet_max_files: int = Field(gt=0, description="no Parquet placeholder tree above this many files")
    threads: int = Field(gt=0, description="builder threads writing manifests")
    late_fraction: float = Field(ge=0, lt=1)
    late_max_days: int = Field(ge=0)
    clock_skew_fraction: float = Field(ge=0, lt=1)
    touch: float = Field(gt=0, le=1, description="chance an ingest batch writes a file to a given day")
    rows_per_file: float = Field(
        gt=0, description="mean rows per data file (entries' counts are scaled to it)"
    )
    seed: int = Field(description="draws of the states' layouts and entries (the template keeps its own)")
    meta_dir: str | None = Field(
        default=None, description="where states are built; null: <paths.data_dir>/meta"
    )
    build_only: bool = Field(default=False, description="build (or reuse) the states, measure nothing")
    model_inputs: bool = Field(
        default=False,
        description="also write model_inputs.csv: the cost model's inputs per state, layout and window, "
        "read from each table's metadata as the doctor reads it",
    )
    sitting: SittingLabel = None
    builder_java_options: str = Field(
        default="", description="extra flags for the builder's JVM, after its -Xmx (not in the state's hash)"
    )


def metadata_scale_config(cfg: DictConfig) -> MetadataScaleConfig:
    """The validated `experiment` section of `metadata_scale`."""
    return load(MetadataScaleConfig, cfg, "experiment")


def meta_names(cfg: DictConfig) -> list[str]:
    """The selected states of the `meta` group; a state set to null (`meta.cal_1m=null`, or in an
    experiment that extends another's ladder) is left out."""
    return [name for name, size in as_dict(cfg, "meta").items() if size is not None]


def meta_configs(cfg: DictConfig) -> dict[str, MetaSizeConfig]:
    """Every selected state of the `meta` group (`meta_names`), by name, validated."""
    return {name: load(MetaSizeConfig, cfg, f"meta.{name}") for name in meta_names(cfg)}
