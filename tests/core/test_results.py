"""Results files are written whole or not at all (a full disk is one line), and JSON and config
files never hold a credential."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml
from omegaconf import OmegaConf

from icelab.core.errors import UserError
from icelab.core.provenance import REDACTED
from icelab.core.results import (
    atomic_path,
    copy_result,
    write_atomic,
    write_config,
    write_csv,
    write_json,
    write_parquet,
)

SECRET = "FAKE-SECRET-0123456789"


def leftovers(directory) -> list[str]:
    return [p.name for p in directory.iterdir() if ".tmp-" in p.name]


def test_json_and_config_are_redacted(tmp_path):
    cfg = OmegaConf.create(
        {"engine": {"conf": {"spark": {"hadoop": {"fs.s3a.secret.key": SECRET}}}}, "seed": 42}
    )
    write_config(tmp_path / "config.yaml", cfg)
    write_json(tmp_path / "run.json", {"variants": {"v": {"spark_conf": {"x.password": SECRET}}}})
    assert SECRET not in (tmp_path / "config.yaml").read_text() + (tmp_path / "run.json").read_text()
    written = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert written == {"engine": {"conf": {"spark": {"hadoop": {"fs.s3a.secret.key": REDACTED}}}}, "seed": 42}


def test_frames_are_written_whole(tmp_path):
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "planning_ms": [1.5, 2.5]})
    write_csv(tmp_path / "summary.csv", frame)
    write_parquet(tmp_path / "timeline.parquet", frame)
    write_parquet(tmp_path / "table.parquet", pa.Table.from_pandas(frame, preserve_index=False))
    assert pd.read_csv(tmp_path / "summary.csv").equals(frame)
    assert pd.read_parquet(tmp_path / "timeline.parquet").equals(frame)
    assert pd.read_parquet(tmp_path / "table.parquet").equals(frame)
    assert leftovers(tmp_path) == []


def test_a_failed_write_keeps_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "summary.csv"
    write_csv(path, pd.DataFrame({"a": [1]}))
    before = path.read_bytes()
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half a fi")
        raise RuntimeError("the writer died")
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_copied_run_file_is_redacted_again(tmp_path):
    # A run written before redaction covered its keys must not carry them into the reference set.
    (tmp_path / "env.json").write_text(json.dumps({"spark_conf": {"spark.x.token": SECRET}}))
    (tmp_path / "config.yaml").write_text(f"engine:\n  conf:\n    api_key: {SECRET}\n")
    (tmp_path / "growth.csv").write_text("a,b\n1,2\n")
    out = tmp_path / "copy"
    out.mkdir()
    for name in ("env.json", "config.yaml", "growth.csv"):
        copy_result(tmp_path / name, out / name)
    assert SECRET not in "".join(p.read_text() for p in out.iterdir())
    assert (out / "growth.csv").read_text() == "a,b\n1,2\n"
    assert leftovers(out) == []


def test_write_atomic_writes_the_whole_file(tmp_path):
    write_atomic(tmp_path / "run.json", "{}\n")
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert (tmp_path / "run.json").read_text() == "{}\n"


def test_write_atomic_on_a_full_disk(full_disk: Path):
    message = (
        f"no space left on the device holding '{full_disk}' while writing summary.csv; "
        "free some space or give another paths.results_dir"
    )
    with pytest.raises(UserError) as caught:
        write_atomic(full_disk / "summary.csv", "x" * 100_000)
    assert str(caught.value) == message
    assert sorted(p.name for p in full_disk.iterdir()) == ["fill"]  # the temporary file is gone
