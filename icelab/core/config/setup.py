"""The `setup` group (conf/setup/): the canonical experiment's reading setups."""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig
from pydantic import Field, PositiveFloat

from icelab.core.config.base import _Strict, as_dict, load


class SetupConfig(_Strict):
    """One reading setup of the canonical experiment (`conf/setup/`): an Iceberg table state
    and the session settings its queries run under.

    Attributes:
        description: what the setup stands for.
        profile: the table state, a profile selected in the `profile` group.
        spark_conf: settings applied only while this setup's Iceberg queries run.
        plant: for testing the statistics only: {query id (q03) or full name: fraction}; each
            execution of those queries sleeps that fraction of its own time more, a slowdown of
            known size for `icelab compare` to find. Recorded in run.json like every setting.
    """

    description: str
    profile: str = Field(min_length=1)
    spark_conf: dict[str, Any] = Field(default_factory=dict)
    plant: dict[str, PositiveFloat] = Field(default_factory=dict)


def setup_configs(cfg: DictConfig) -> dict[str, SetupConfig]:
    """The validated setups selected in the `setup` group, by name."""
    raw = as_dict(cfg, "setup")
    return {name: load(SetupConfig, cfg, f"setup.{name}") for name in raw}
