"""The `verify` section: how a build checks that both tables hold the same rows."""

from __future__ import annotations

from typing import Literal

from omegaconf import DictConfig
from pydantic import Field

from icelab.core.config.base import _Strict, load


class VerifyConfig(_Strict):
    """Who checks the two tables, and how far."""

    duckdb: bool = Field(description="DuckDB also reads both tables (local data, or storage=object)")
    duckdb_memory: str = Field(min_length=1, description="DuckDB's memory limit while it verifies")
    allow_duckdb_errors: bool = Field(description="a failed DuckDB answer check lets the run complete")
    readers_per_day: Literal[2, 4] = Field(
        description="readings of each day partition: 2 (one Spark and one DuckDB reading, of "
        "different tables) or 4 (every reading reads every day)"
    )


def verify_config(cfg: DictConfig) -> VerifyConfig:
    """The validated `verify` section."""
    return load(VerifyConfig, cfg, "verify")
