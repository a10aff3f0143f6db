"""Loading one config section: pydantic checks it, bad input becomes one line naming the key."""

from __future__ import annotations

import itertools
from typing import Any

from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel, ConfigDict, ValidationError

from icelab.core.errors import UserError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


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


def as_dict(cfg: DictConfig, key: str) -> dict[str, Any]:
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
    raw = as_dict(cfg, section)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise UserError(_one_line(section, exc, raw)) from None
