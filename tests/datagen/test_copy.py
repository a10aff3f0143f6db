"""`paths.copy_from`: a finished dataset copied to another data directory instead of built.

The copy runs in its own `python run.py` because the copied dataset has the same hash, hence
the same Spark catalog name, as the source: in one session the catalog loaded first would serve
both, and the copy's verification would read the source.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from icelab.core import storage
from tests.conftest import run_py
from tests.reliability import MICRO

# The micro dataset (tests/reliability.py) built by `experiment=datagen`: a tenth of tiny's files.
DATAGEN = [
    "experiment=datagen",
    *(arg for arg in MICRO if arg.startswith(("dataset", "engine", "++engine"))),
    "progress=false",
]


def datagen(*overrides: str) -> subprocess.CompletedProcess:
    done = run_py(*DATAGEN, *overrides)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def copied(micro_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, Any]:
    """The micro dataset, copied from the tests' shared micro directory (built first, if no
    test has yet) to a fresh one by `experiment=datagen`: (the copy, the source's dataset.json,
    the copy's process)."""
    tmp = tmp_path_factory.mktemp("copy")
    outputs = [f"paths.results_dir={tmp / 'results'}", f"hydra.run.dir={tmp / 'outputs'}"]
    if not list(micro_data.glob("micro-*/dataset.json")):
        datagen(f"paths.data_dir={micro_data}", *outputs)
    (source,) = micro_data.glob("micro-*/dataset.json")
    proc = datagen(
        f"paths.data_dir={tmp / 'data'}", f"paths.copy_from={micro_data}", "verify.duckdb=true", *outputs
    )
    return tmp / "data" / source.parent.name, json.loads(source.read_text()), proc


def test_the_copy_is_verified_where_it_landed_with_the_sources_rows(copied):
    target, source, proc = copied
    info = json.loads((target / "dataset.json").read_text())
    assert info["uri"] == storage.to_uri(str(target))
    # Verified afresh at the copy by all four readers, with the source's checksums (the source
    # may have been verified without DuckDB: MICRO's build).
    readings = info["verification"]
    assert sorted(readings) == ["duckdb/iceberg", "duckdb/parquet", "spark/iceberg", "spark/parquet"]
    assert all(readings[name] == source["verification"]["spark/iceberg"] for name in readings)
    assert info["copy"]["from"] == source["uri"]
    assert info["summary"] == source["summary"]
    files = info["summary"]["parquet"]["files"] + info["summary"]["iceberg"]["files"]
    assert info["copy"]["files"] > files  # every data file and Iceberg's metadata files
    assert "copied from" in proc.stdout.splitlines()[0]


def test_every_iceberg_path_names_the_copy(copied):
    target, source_info, _ = copied
    metadata = target / "iceberg" / "bench" / "events" / "metadata"
    hint = (metadata / "version-hint.text").read_text().strip()
    current = json.loads((metadata / f"v{hint}.metadata.json").read_text())
    assert current["location"] == storage.to_uri(str(target / "iceberg" / "bench" / "events"))
    named = [s["manifest-list"] for s in current["snapshots"]]
    named += [e["metadata-file"] for e in current["metadata-log"]]
    assert named and all(path.startswith("file:") and f"{target}/" in path for path in named)
    # The source is left as it was, and the staged metadata is gone.
    source = Path(storage.local_path(source_info["uri"]))
    assert not list(source.parent.glob(".copy-*"))
    source_meta = json.loads(
        (source / "iceberg/bench/events/metadata" / f"v{hint}.metadata.json").read_text()
    )
    assert source_meta["location"] == storage.to_uri(str(source / "iceberg" / "bench" / "events"))
