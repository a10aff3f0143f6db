"""The arrow builder's Parquet writer: each file in the dataset's codec, as Spark would write it."""

from __future__ import annotations

import typing
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icelab.core.config.dataset import DatasetConfig
from icelab.datagen.arrow_ingest import CODECS, Target, write_file

# The codecs the dataset config accepts, and the name each has in a Parquet footer.
ACCEPTED = typing.get_args(DatasetConfig.model_fields["compression"].annotation)
FOOTER_NAME = {"zstd": "ZSTD", "gzip": "GZIP", "snappy": "SNAPPY", "uncompressed": "UNCOMPRESSED"}


def test_every_accepted_codec_has_a_writer():
    assert set(ACCEPTED) == set(CODECS)


@pytest.mark.parametrize("compression", ACCEPTED)
def test_each_file_in_the_datasets_codec(tmp_path: Path, compression: str):
    table = pa.table(
        {"id": pa.array(range(100), pa.int64()), "name": pa.array([f"n{i % 7}" for i in range(100)])}
    )
    target = Target(
        root=str(tmp_path), uri=f"file:{tmp_path}", schema=table.schema, metadata={}, partition_key="date"
    )
    path = tmp_path / "part.parquet"
    write_file(str(path), table, target, compression)
    meta = pq.ParquetFile(path).metadata
    codecs = {meta.row_group(0).column(c).compression for c in range(meta.num_columns)}
    assert codecs == {FOOTER_NAME[compression]}
    assert pq.read_table(path).equals(table)
