"""The `storage` group (conf/storage/): where the data lives, local or an S3 object store."""

from __future__ import annotations

from typing import Literal

from omegaconf import DictConfig
from pydantic import Field, field_validator, model_validator

from icelab.core.config.base import _Strict, load


class FaultsConfig(_Strict):
    """Faults the delay proxy deals the store's requests (`storage.faults`): a seeded share
    answered 503 SlowDown, reset part-way through the response, or stalled `stall_s`."""

    seed: int = Field(default=0, ge=0)
    slowdown_rate: float = Field(default=0, ge=0, le=1, description="share answered 503 SlowDown")
    reset_rate: float = Field(default=0, ge=0, le=1, description="share reset mid-response")
    stall_rate: float = Field(default=0, ge=0, le=1, description="share held back stall_s")
    stall_s: float = Field(default=0, ge=0, le=3600)

    @model_validator(mode="after")
    def _rates(self) -> FaultsConfig:
        if self.slowdown_rate + self.reset_rate + self.stall_rate > 1:
            raise ValueError("slowdown_rate + reset_rate + stall_rate is above 1")
        if self.stall_rate and not self.stall_s:
            raise ValueError("stall_rate needs stall_s above 0")
        return self

    @property
    def active(self) -> bool:
        """Whether any request can meet a fault."""
        return self.slowdown_rate + self.reset_rate + self.stall_rate > 0


class StorageConfig(_Strict):
    """`local`: paths.data_dir as given (a path, or any URI Hadoop reaches with the engine's own
    settings). `object`: an S3 store, either Ceph RGW started by icelab on loopback or an
    existing endpoint, with its S3A, DuckDB and latency settings."""

    kind: Literal["local", "object"]
    endpoint: str | None = Field(default=None, description="an existing S3 endpoint; null: start RGW")
    bucket: str = Field(default="icelab", pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    port: int = Field(default=0, ge=0, le=65535, description="RGW's port on 127.0.0.1; 0: a free one")
    latency_ms: float = Field(default=0, ge=0, le=10_000, description="added round trip, Spark <-> store")
    dir: str = Field(default="data/object-store", min_length=1, description="RGW's state and logs")
    capacity_gb: float = Field(default=20, gt=0, description="the RGW OSD's sparse block file")
    start_timeout_s: float = Field(default=180, gt=0)
    outage_wait_s: float = Field(
        default=60, ge=0, le=3600, description="how long a store that stopped answering may take to return"
    )
    access_key_env: str = Field(default="ICELAB_S3_ACCESS_KEY", min_length=1)
    secret_key_env: str = Field(default="ICELAB_S3_SECRET_KEY", min_length=1)
    region: str = Field(default="us-east-1", min_length=1)
    signer: str | None = Field(default="S3SignerType", description="fs.s3a.signing-algorithm; null: SDK's")
    create_bucket: bool = True
    faults: FaultsConfig = Field(default_factory=FaultsConfig)

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("give the endpoint as http://host:port or https://host[:port], or null")
        return value.rstrip("/") if value else None

    @model_validator(mode="after")
    def _latency(self) -> StorageConfig:
        for name, on in (("latency_ms", bool(self.latency_ms)), ("storage.faults", self.faults.active)):
            if on and self.kind == "local":
                raise ValueError(f"{name} needs storage=object")
            if on and self.endpoint and self.endpoint.startswith("https://"):
                raise ValueError(
                    f"{name} needs an http:// endpoint: through the delay proxy TLS would reach "
                    "a name its certificate does not hold"
                )
        return self

    @property
    def proxied(self) -> bool:
        """Whether Spark reaches the store through the delay proxy (latency or faults)."""
        return bool(self.latency_ms) or self.faults.active


def storage_config(cfg: DictConfig) -> StorageConfig:
    """The validated `storage` section (a config without one is local storage)."""
    if cfg.get("storage") is None:
        return StorageConfig(kind="local")
    return load(StorageConfig, cfg, "storage")
