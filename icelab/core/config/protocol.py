"""The `protocol` section: how often each query runs and what counts as a stable figure."""

from __future__ import annotations

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, load
from icelab.core.config.values import WindowName


class ProtocolConfig(_Strict):
    """How often each query runs and what counts as a stable figure."""

    warmups: int = Field(ge=0, description="rounds first, recorded with warmup=true, never in medians")
    warmups_execute: bool | WindowName = Field(
        description="warm-up rounds also run each query to completion: every case (true), none "
        "(false), or the cases whose window is at most this one (a window name)"
    )
    repetitions: int = Field(ge=1, description="measured rounds")
    executions: int = Field(ge=0, description="measured rounds that also run the query to completion")
    unstable_iqr: float = Field(gt=0, description="flag a median when IQR / median exceeds this")
    keep_faulted: bool = Field(
        default=False,
        description="medians keep measurements marked faulted (a store fault, an S3 retry, a stall)",
    )
    overhead_pairs: int = Field(ge=0, description="measure() vs plain collect pairs per variant and query")
    overhead_window: WindowName
    warm_cache: bool = Field(description="read the dataset's local files once before measuring")
    steady_k: int = Field(
        default=0, ge=0, description="executed warm-ups per case until the last k agree (0: off)"
    )
    steady_tolerance: float = Field(
        default=0.05, gt=0, description="the last k agree when (max - min) / median is at most this"
    )
    steady_cap: int = Field(default=10, ge=1, description="executed warm-ups per case at most")
    retakes: int = Field(
        default=1,
        ge=0,
        description="times a measured repetition marked a stall, a garbage collection or an outlier "
        "is measured again (icelab/bench/stalls.py; 0: never)",
    )
    deadline_s: float | None = Field(
        default=None,
        gt=0,
        description="the run's last guard: past this many seconds from its start it ends interrupted, "
        "every row kept, saying what it was doing (off by default; on in CI)",
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="stop a measurement that runs longer: cancel its jobs, interrupt its planning "
        "(an error row)",
    )
    timeout_grace_s: float = Field(
        default=60,
        gt=0,
        description="a measurement still running this long after timeout_s ends the driver JVM "
        "(an error row; the run goes on in a new session where the experiment can)",
    )

    @model_validator(mode="after")
    def _executions(self) -> ProtocolConfig:
        if self.executions > self.repetitions:
            raise ValueError(f"executions ({self.executions}) exceeds repetitions ({self.repetitions})")
        if self.steady_k > self.steady_cap:
            raise ValueError(f"steady_k ({self.steady_k}) exceeds steady_cap ({self.steady_cap})")
        return self


def protocol_config(cfg: DictConfig) -> ProtocolConfig:
    """The validated `protocol` section."""
    return load(ProtocolConfig, cfg, "protocol")
