"""The `paths` section: where datasets and results live."""

from __future__ import annotations

from omegaconf import DictConfig
from pydantic import Field

from icelab.core.config.base import _Strict, load


class PathsConfig(_Strict):
    """Where datasets and results live: local paths or any Hadoop URI."""

    data_dir: str = Field(min_length=1)
    results_dir: str = Field(min_length=1)
    min_free_gb: float = Field(ge=0, description="least free space on a local data or results disk")
    copy_from: str | None = Field(
        default=None, min_length=1, description="a data directory holding the dataset finished: copy it"
    )


def paths_config(cfg: DictConfig) -> PathsConfig:
    """The validated `paths` section."""
    return load(PathsConfig, cfg, "paths")
