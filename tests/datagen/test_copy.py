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
def copied(micro_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, Any, str]:
    """The micro dataset, copied from the tests' shared micro directory (built first, if no
    test has yet) to a fresh one by `experiment=datagen`, named through a symlink: the path given
    is not the one Iceberg's metadata names (where it was built), as when another module built
    it through a link of its own. (the copy, the source's dataset.json, the copy's process, the
    source's URI as given)."""
    tmp = tmp_path_factory.mktemp("copy")
    outputs = [f"paths.results_dir={tmp / 'results'}", f"hydra.run.dir={tmp / 'outputs'}"]
    if not list(micro_data.glob("micro-*/dataset.json")):
        datagen(f"paths.data_dir={micro_data}", *outputs)
    (source,) = micro_data.glob("micro-*/dataset.json")
    link = tmp / "link"
    link.symlink_to(micro_data, target_is_directory=True)
    proc = datagen(
        f"paths.data_dir={tmp / 'data'}", f"paths.copy_from={link}", "verify.duckdb=true", *outputs
    )
    given = storage.join(storage.to_uri(str(link)), source.parent.name)
    return tmp / "data" / source.parent.name, json.loads(source.read_text()), proc, given


def test_the_copy_is_verified_where_it_landed_with_the_sources_rows(copied):
    target, source, proc, given = copied
    info = json.loads((target / "dataset.json").read_text())
    assert info["uri"] == storage.to_uri(str(target))
    # Verified afresh at the copy by all four readers, with the source's checksums (the source
    # may have been verified without DuckDB: MICRO's build).
    assert sorted(info["verified_by"]) == [
        "duckdb/iceberg",
        "duckdb/parquet",
        "spark/iceberg",
        "spark/parquet",
    ]
    assert info["verification"] == source["verification"]
    assert info["copy"]["from"] == given != source["uri"]
    assert info["summary"] == source["summary"]
    files = info["summary"]["parquet"]["files"] + info["summary"]["iceberg"]["files"]
    assert info["copy"]["files"] > files  # every data file and Iceberg's metadata files
    assert "copied from" in proc.stdout.splitlines()[0]


def test_every_iceberg_path_names_the_copy(copied):
    target, source_info, _, _ = copied
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


def test_a_source_moved_after_its_build_is_one_line(copied, tmp_path):
    """The copy's own data directory, moved: its metadata still names the place it was written,
    which is gone, so copying from the new place says so in one line (not Iceberg's exception)."""
    target, _, _, _ = copied
    moved = tmp_path / "moved"
    target.parent.rename(moved)
    try:
        outputs = [f"paths.results_dir={tmp_path / 'results'}", f"hydra.run.dir={tmp_path / 'outputs'}"]
        done = run_py(*DATAGEN, f"paths.data_dir={tmp_path / 'data'}", f"paths.copy_from={moved}", *outputs)
    finally:
        moved.rename(target.parent)
    assert done.returncode == 2, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.strip() and "log level" not in line]
    assert lines[-1] == (
        f"icelab: error: paths.copy_from: {storage.to_uri(str(moved / target.name))} was built at "
        f"{storage.to_uri(str(target))}, where its Iceberg metadata names every file, and that place is gone "
        "(moved?); copy it from there, or build it again"
    ), done.stderr[-3000:]
    assert "Traceback" not in done.stdout + done.stderr
