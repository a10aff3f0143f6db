"""`icelab.datagen.bound`: the floors are timed on the dataset's own rows, and the bound counts
every file and byte of both formats, written and read, over the cores."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icelab.core import storage
from icelab.datagen import bound as bound_module
from icelab.datagen.bound import bound, floors
from icelab.datagen.generate import generate_rows

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def schema(ctx, tiny):
    return generate_rows(ctx.spark, tiny.dataset.config, 0, 0, 1).schema


def test_the_floors_are_timed_on_one_batch_of_the_dataset(tiny, schema):
    ds = tiny.dataset.config
    f = floors(tiny.dataset, schema)
    assert f["batch_rows"] == ds.total_rows // ds.commits
    assert all(f[k] > 0 for k in f)


def test_the_bound_counts_both_formats_written_and_read_over_the_cores(tiny, schema, monkeypatch):
    measured = floors(tiny.dataset, schema)
    monkeypatch.setattr(bound_module, "floors", lambda *_: measured)
    monkeypatch.setattr(bound_module, "cores", lambda: 2)
    info = tiny.info
    b = bound(tiny.dataset, schema, info)
    s = info["summary"]
    files = s["parquet"]["files"] + s["iceberg"]["files"]
    mb = (s["parquet"]["bytes"] + s["iceberg"]["bytes"]) / 1e6
    write = files * measured["write_file_ms"] / 1e3 + mb / measured["write_mb_per_s"]
    read = files * measured["read_file_ms"] / 1e3 + mb / measured["read_mb_per_s"]
    generate = measured["generate_batch_s"] * tiny.dataset.config.commits
    assert b["bound_s"] == pytest.approx((generate + write + read) / 2)
    # One more core divides the same work further.
    monkeypatch.setattr(bound_module, "cores", lambda: 3)
    assert bound(tiny.dataset, schema, info)["bound_s"] == pytest.approx((generate + write + read) / 3)


def test_a_file_is_counted_in_pages_through_the_codec(tiny, schema):
    """A one-row file of the schema has one data page per column and a dictionary page for each
    column but the booleans (which pyarrow never dictionary-encodes): read off a file the build
    wrote, not off the one-row file the floors count."""
    files = sorted(Path(storage.local_path(tiny.dataset.iceberg_uri)).rglob("*.parquet"))
    meta = pq.ParquetFile(files[0]).metadata
    columns = meta.num_columns
    booleans = sum(meta.schema.column(i).physical_type == "BOOLEAN" for i in range(columns))
    assert floors(tiny.dataset, schema)["pages_per_file"] == 2 * columns - booleans


def test_the_codecs_fixed_cost_is_timed_for_the_datasets_codec():
    assert bound_module.codec_call_us("uncompressed") == (0.0, 0.0)
    compress_us, decompress_us = bound_module.codec_call_us("zstd")
    assert compress_us > 0 and decompress_us > 0
