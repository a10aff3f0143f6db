"""The `dataset` group (conf/dataset/): what the synthetic dataset is and how it is ingested."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, load


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
    builder: Literal["spark", "arrow"] = Field(
        "spark",
        description="who writes the files: Spark's writers, or numpy and pyarrow with Iceberg commits "
        "through its Java API (the same rows; other file bytes, so another dataset hash)",
    )

    @model_validator(mode="after")
    def _fractions(self) -> DatasetConfig:
        if self.late_fraction + self.clock_skew_fraction > 1:
            raise ValueError("late_fraction + clock_skew_fraction must be at most 1")
        if self.total_rows < self.commits:
            raise ValueError(f"rows*scale={self.total_rows} is fewer than commits={self.commits}")
        return self

    @model_validator(mode="after")
    def _builder_partitions(self) -> DatasetConfig:
        if self.builder == "arrow" and self.partitioning != "day":
            raise ValueError(
                f"the arrow builder writes day partitions only; give dataset.builder=spark "
                f"for partitioning={self.partitioning}"
            )
        return self

    @property
    def total_rows(self) -> int:
        """Rows after scaling."""
        return int(round(self.rows * self.scale))


def dataset_config(cfg: DictConfig) -> DatasetConfig:
    """The validated `dataset` section."""
    return load(DatasetConfig, cfg, "dataset")
