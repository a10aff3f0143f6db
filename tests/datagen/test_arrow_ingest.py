"""The arrow builder's Parquet writer: each file in the dataset's codec, as Spark would write it."""

from __future__ import annotations

import socket
import typing
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icelab.core.config.dataset import DatasetConfig
from icelab.core.errors import UserError
from icelab.core.object_store import s3
from icelab.datagen.arrow_ingest import CODECS, Sink, Target, footer_copy, write_file

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


def test_a_put_that_fails_in_the_background_fails_the_batch(tmp_path: Path):
    # A Sink sends its PUTs on threads while the worker goes on: the error of one must reach the
    # worker when it waits for the batch, before the driver commits files the store lacks.
    table = pa.table({"id": pa.array(range(10), pa.int64())})
    target = Target(root="/b/t", uri="s3a://b/t", schema=table.schema, metadata={}, partition_key="date")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nothing listens there once the socket is closed
    with Sink(s3.Endpoint(f"http://127.0.0.1:{port}", "key", "secret")) as sink:
        data = sink.write("/b/t/part.parquet", table, target, "zstd")
        assert pq.read_table(pa.BufferReader(data)).equals(table)  # the file, encoded before it is sent
        with pytest.raises(UserError, match="unreachable"):
            sink.wait()
        sink.wait()  # each failure is raised once


def test_a_footer_copy_reads_as_the_files_footer(tmp_path: Path):
    table = pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)]})
    target = Target(str(tmp_path), f"file:{tmp_path}", table.schema, metadata={}, partition_key="d")
    path = tmp_path / "part.parquet"
    write_file(str(path), table, target, "zstd")
    footer_copy(path.read_bytes(), tmp_path / "part.footer")
    assert pq.ParquetFile(tmp_path / "part.footer").metadata.equals(pq.ParquetFile(path).metadata)
