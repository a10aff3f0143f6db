"""`paths.copy_from`: a finished dataset copied to another data directory instead of built.

The copy runs in its own `python run.py` because the copied dataset has the same hash, hence
the same Spark catalog name, as the source: in one session the catalog loaded first would serve
both, and the copy's verification would read the source.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from icelab.core import storage
from tests.conftest import FAST_JVM

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def copied(tiny, data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """tiny, copied from the tests' data directory to a fresh one by `experiment=datagen`."""
    tmp = tmp_path_factory.mktemp("copy")
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "run.py"),
            "experiment=datagen",
            "dataset=tiny",
            "progress=false",
            *FAST_JVM,
            "engine.driver_memory=2g",
            f"paths.data_dir={tmp / 'data'}",
            f"paths.copy_from={data_dir}",
            f"paths.results_dir={tmp / 'results'}",
            f"hydra.run.dir={tmp / 'outputs'}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "data" / tiny.dataset.uri.rsplit("/", 1)[1], proc


def test_the_copy_is_verified_where_it_landed_with_the_sources_rows(tiny, copied):
    target, proc = copied
    info = json.loads((target / "dataset.json").read_text())
    assert info["uri"] == storage.to_uri(str(target))
    # Verified afresh at the copy by all four readers, with the source's checksums.
    assert info["verification"] == tiny.info["verification"]
    assert info["copy"]["from"] == tiny.dataset.uri
    assert info["summary"] == tiny.info["summary"]
    files = info["summary"]["parquet"]["files"] + info["summary"]["iceberg"]["files"]
    assert info["copy"]["files"] > files  # every data file and Iceberg's metadata files
    assert "copied from" in proc.stdout.splitlines()[0]


def test_every_iceberg_path_names_the_copy(tiny, copied):
    target, _ = copied
    metadata = target / "iceberg" / "bench" / "events" / "metadata"
    hint = (metadata / "version-hint.text").read_text().strip()
    current = json.loads((metadata / f"v{hint}.metadata.json").read_text())
    assert current["location"] == storage.to_uri(str(target / "iceberg" / "bench" / "events"))
    named = [s["manifest-list"] for s in current["snapshots"]]
    named += [e["metadata-file"] for e in current["metadata-log"]]
    assert named and all(path.startswith("file:") and f"{target}/" in path for path in named)
    # The source is left as it was, and the staged metadata is gone.
    source = Path(storage.local_path(tiny.dataset.uri))
    assert not list(source.parent.glob(".copy-*"))
    source_meta = json.loads(
        (source / "iceberg/bench/events/metadata" / f"v{hint}.metadata.json").read_text()
    )
    assert source_meta["location"] == storage.to_uri(str(source / "iceberg" / "bench" / "events"))
