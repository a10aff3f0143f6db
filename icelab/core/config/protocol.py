"""The `protocol` section: how often each query runs and what counts as a stable figure."""

from __future__ import annotations

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, load
from icelab.core.config.values import WindowName


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


def protocol_config(cfg: DictConfig) -> ProtocolConfig:
    """The validated `protocol` section."""
    return load(ProtocolConfig, cfg, "protocol")
