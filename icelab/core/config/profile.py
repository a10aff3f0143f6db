"""The `profile` group (conf/profile/): Iceberg table states."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig
from pydantic import Field, model_validator

from icelab.core.config.base import _Strict, as_dict, load
from icelab.core.config.values import parse_size


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


def profile_configs(cfg: DictConfig) -> dict[str, ProfileConfig]:
    """The validated profiles selected in the `profile` group, by name."""
    raw = as_dict(cfg, "profile")
    return {name: load(ProfileConfig, cfg, f"profile.{name}") for name in raw}
