"""`icelab.datagen.bound`: the floors are timed on the dataset's own rows, and the bound counts
every file and byte of both formats, written and read, over the cores."""

from __future__ import annotations

import numpy as np
import pytest

from icelab.datagen import bound as bound_module
from icelab.datagen.arrow_events import arrow_schema, batch_arrays
from icelab.datagen.arrow_ingest import by_day
from icelab.datagen.bound import bound, floors
from icelab.datagen.dictionaries import dictionary_columns, leaves
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


def test_a_one_row_file_is_counted_in_pages_through_the_codec(schema, tiny):
    """A one-row file of the schema has one data page per column, and a dictionary page only
    where parquet-mr's rule keeps one (a list of repeated values can, one value cannot). The
    columns are counted off the schema's leaves, not off the file the floors write."""
    empty = arrow_schema(schema).empty_table()
    columns = sum(
        1
        for column, name in zip(empty.columns, empty.column_names, strict=True)
        for _ in leaves(column.combine_chunks(), name, np.arange(0))
    )
    first_row = by_day(batch_arrays(tiny.dataset.config, 0, arrow_schema(schema)))[0].slice(0, 1)
    kept = dictionary_columns(first_row, [0])[0]
    assert 0 < len(kept) < columns
    assert floors(tiny.dataset, schema)["pages_per_file"] == columns + len(kept)


def test_the_codecs_fixed_cost_is_timed_for_the_datasets_codec():
    assert bound_module.codec_call_us("uncompressed") == (0.0, 0.0)
    compress_us, decompress_us = bound_module.codec_call_us("zstd")
    assert compress_us > 0 and decompress_us > 0
