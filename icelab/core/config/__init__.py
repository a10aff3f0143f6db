"""Typed, validated view of the composed Hydra config, one module per config group.

Hydra composes; pydantic checks ranges and types, so bad input becomes one line naming
the key, the value and what is accepted. Where each section is typed:

    base.py        loading a section (one-line errors), Spark conf flattening
    values.py      window names (1h, 7d, full) and sizes (8MB)
    dataset.py     dataset        engine.py   engine        paths.py     paths
    profile.py     profile        setup.py    setup         protocol.py  protocol
    storage.py     storage        verify.py   verify
    experiment.py  experiment (planning, canonical, manifest_health, doctor, snapshot_expiry,
                   schema_evolution)
"""

from icelab.core.config.base import flatten, load
from icelab.core.config.dataset import DatasetConfig, dataset_config
from icelab.core.config.engine import EngineConfig, engine_config
from icelab.core.config.experiment import (
    HEALTH_SOURCES,
    HEALTH_STATS,
    CanonicalConfig,
    CatalogueConfig,
    DoctorConfig,
    ExpiryConfig,
    HealthConfig,
    PlanningConfig,
    SchemaEvolutionConfig,
    Threshold,
    canonical_config,
    catalogue_config,
    doctor_config,
    expiry_config,
    health_config,
    manifest_health_rules,
    planning_config,
    schema_evolution_config,
)
from icelab.core.config.paths import PathsConfig, paths_config
from icelab.core.config.profile import ProfileConfig, profile_configs
from icelab.core.config.protocol import ProtocolConfig, protocol_config
from icelab.core.config.setup import SetupConfig, setup_configs
from icelab.core.config.storage import StorageConfig, storage_config
from icelab.core.config.values import WINDOW_RULE, WindowName, parse_size, window_length
from icelab.core.config.verify import VerifyConfig, verify_config

__all__ = [
    "HEALTH_SOURCES",
    "HEALTH_STATS",
    "WINDOW_RULE",
    "CanonicalConfig",
    "DatasetConfig",
    "CatalogueConfig",
    "DoctorConfig",
    "EngineConfig",
    "ExpiryConfig",
    "HealthConfig",
    "PathsConfig",
    "PlanningConfig",
    "ProfileConfig",
    "ProtocolConfig",
    "SchemaEvolutionConfig",
    "SetupConfig",
    "StorageConfig",
    "Threshold",
    "VerifyConfig",
    "WindowName",
    "canonical_config",
    "dataset_config",
    "catalogue_config",
    "doctor_config",
    "engine_config",
    "expiry_config",
    "flatten",
    "health_config",
    "load",
    "manifest_health_rules",
    "parse_size",
    "paths_config",
    "planning_config",
    "profile_configs",
    "protocol_config",
    "schema_evolution_config",
    "setup_configs",
    "storage_config",
    "verify_config",
    "window_length",
]
