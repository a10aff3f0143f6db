"""A Hadoop catalog of a test module's own, for tables icelab did not create (plain Spark SQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core import storage
from icelab.core.session import register_iceberg_catalog


def own_warehouse(ctx, tmp_path_factory: pytest.TempPathFactory, name: str, catalog: str) -> Path:  # noqa: ANN001
    """A new warehouse directory `<name>-warehouse`, registered in the session as `catalog`."""
    path = tmp_path_factory.mktemp(f"{name}-warehouse")
    register_iceberg_catalog(ctx.spark, catalog, storage.to_uri(str(path)), ctx.engine)
    return path
