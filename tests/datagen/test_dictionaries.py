"""parquet-mr's dictionary rule (`icelab.datagen.dictionaries`) on hand-made columns; the rule
against Spark's own files is in test_arrow_build.py."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from icelab.datagen.dictionaries import dictionary_columns, ids_bytes, leaves


@pytest.mark.parametrize(
    ("runs", "width", "expected"),
    [
        # 15 ids, no repeats of 8: two bit-packed groups of 2 bytes behind one header.
        ([3, 10, 2], 2, 1 + 2 * 2),
        # One group [a, b x 7] bit-packed, then the 13 b's left as a repeated run: varint(26), 1 byte.
        ([1, 20], 1, (1 + 1) + (1 + 1)),
        # One value 300 times at width 0: one repeated run, varint(600) is 2 bytes.
        ([300], 0, 2),
        # 64 groups of distinct ids: a bit-packed run holds at most 63 groups.
        ([1] * 512, 9, 64 * 9 + 2),
        ([], 3, 0),
    ],
)
def test_ids_bytes_follow_parquet_mrs_hybrid_encoder(runs, width, expected):
    assert ids_bytes(runs, width) == expected


def test_leaves_follow_the_parquet_paths_and_drop_nulls():
    table = pa.table(
        {
            "s": pa.array([{"a": "x"}, None, {"a": None}], pa.struct([("a", pa.string())])),
            "l": pa.array([[1, 2], None, [3]], pa.list_(pa.field("element", pa.int32()))),
            "m": pa.array([[("k", "v")], [], None], pa.map_(pa.string(), pa.string())),
        }
    )
    got = {
        path: (values.to_pylist(), rows.tolist())
        for column, name in zip(table.columns, table.column_names, strict=True)
        for path, values, rows in leaves(column.combine_chunks(), name, np.arange(3))
    }
    assert got == {
        "s.a": (["x"], [0]),
        "l.list.element": ([1, 2, 3], [0, 0, 2]),
        "m.key_value.key": (["k"], [0]),
        "m.key_value.value": (["v"], [0]),
    }


def test_a_dictionary_is_kept_only_where_it_is_smaller_than_the_values_plain():
    repeated = ["a-long-repeated-value"] * 10
    distinct = [f"value-{i}" for i in range(10)]
    table = pa.table({"r": repeated + distinct[:1], "d": distinct + ["x"], "b": [True] * 11})
    # File 0: rows 0-9; file 1: row 10 alone (one value never pays for its dictionary).
    assert dictionary_columns(table, [0, 10]) == [["r"], []]
