"""Which column chunks parquet-mr writes with a dictionary, so that the arrow builder writes the same.

Spark's and Iceberg's writers (parquet-mr, writer version 1) start every column but booleans on a
dictionary, and drop it when the first page is written if the dictionary does not pay
(`FallbackValuesWriter`): the page's dictionary ids, encoded, plus the dictionary itself must be
smaller than the same values written plain (`DictionaryValuesWriter.isCompressionSatisfying`).
A small file holds one page per column, so the rule applies to the whole chunk. pyarrow keeps a
dictionary for every column unless told; each one costs a page through the codec when the file
is written and again when it is read.

The ids' size is that of parquet-mr's `RunLengthBitPackingHybridEncoder`: groups of 8 ids
bit-packed at the dictionary's bit width, up to 63 groups behind a one-byte header, and a run of
8 or more equal ids written as one repeated value.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# parquet-mr's bit-packed runs: at most this many groups of 8 values behind one header byte.
MAX_GROUPS = 63
# A repeat this long is written as a run-length run instead of bit-packed.
MIN_REPEAT = 8
# Up to this many (file, value) pairs, a batch's distinct values per file are marked in a table
# rather than hashed.
PAIR_TABLE = 1 << 20


def _plain_sizes(values: pa.Array) -> np.ndarray | int | None:
    """Each value's size written plain (a length prefix and the bytes for binary), or None for
    booleans, which parquet-mr never puts in a dictionary."""
    t = values.type
    if pa.types.is_boolean(t):
        return None
    if pa.types.is_binary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return 4 + pc.binary_length(values).to_numpy(zero_copy_only=False).astype(np.int64)
    return t.bit_width // 8


def leaves(array: pa.Array, path: str, files: np.ndarray) -> Iterator[tuple[str, pa.Array, np.ndarray]]:
    """Each leaf column under `array`: its Parquet path, its non-null values in the order a writer
    writes them, and the file each value goes to (`files`: the file of each of `array`'s slots)."""
    t = array.type
    if pa.types.is_struct(t):
        for child, f in zip(array.flatten(), t, strict=True):
            yield from leaves(child, f"{path}.{f.name}", files)
    elif pa.types.is_map(t):
        as_list = array.cast(pa.list_(pa.field("key_value", pa.struct([t.key_field, t.item_field]))))
        entries = as_list.flatten()
        inner = files[pc.list_parent_indices(as_list).to_numpy()]
        for child, f in zip(entries.flatten(), entries.type, strict=True):
            yield from leaves(child, f"{path}.key_value.{f.name}", inner)
    elif pa.types.is_list(t):
        inner = files[pc.list_parent_indices(array).to_numpy()]
        yield from leaves(array.flatten(), f"{path}.list.{t.value_field.name}", inner)
    else:
        if array.null_count == 0:
            yield path, array, files
        else:
            yield path, pc.drop_null(array), files[array.is_valid().to_numpy(zero_copy_only=False)]


def _varint_bytes(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def ids_bytes(runs: Sequence[int], width: int) -> int:
    """The bytes parquet-mr's hybrid encoder writes for ids in `runs` (lengths of runs of equal
    ids, each run's id differing from the one before) at bit width `width`."""
    size = buffered = repeat = groups = 0
    value_bytes = (width + 7) // 8

    def pack() -> None:
        nonlocal size, buffered, repeat, groups
        if groups >= MAX_GROUPS:
            groups = 0
        if groups == 0:
            size += 1  # a new bit-packed run's header
        size += width
        buffered = repeat = 0
        groups += 1

    def repeated_run() -> None:
        nonlocal size, buffered, repeat, groups
        size += _varint_bytes(repeat << 1) + value_bytes
        buffered = repeat = groups = 0

    for length in runs:
        if repeat >= MIN_REPEAT:
            repeated_run()
        repeat = 0
        for i in range(length):
            repeat += 1
            if repeat >= MIN_REPEAT:
                repeat += length - 1 - i
                break
            buffered += 1
            if buffered == MIN_REPEAT:
                pack()
    if repeat >= MIN_REPEAT:
        repeated_run()
    elif buffered:
        pack()
    return size


def dictionary_columns(table: pa.Table, starts: Sequence[int]) -> list[list[str]]:
    """The columns parquet-mr would write with a dictionary in each file, the files being the
    table's row ranges that begin at `starts` (ascending, the first 0) and end where the next begins."""
    n_files = len(starts)
    files = np.repeat(np.arange(n_files), np.diff(np.r_[starts, table.num_rows]))
    chosen: list[list[str]] = [[] for _ in range(n_files)]
    for column, name in zip(table.columns, table.column_names, strict=True):
        for path, values, file in leaves(column.combine_chunks(), name, files):
            sizes = _plain_sizes(values)
            if sizes is None:
                continue
            for f in _satisfied(values, sizes, file, n_files):
                chosen[f].append(path)
    return chosen


def _satisfied(values: pa.Array, sizes: np.ndarray | int, file: np.ndarray, n_files: int) -> list[int]:
    """The files in which these values' dictionary pays, by parquet-mr's rule."""
    if len(values) == 0:
        return []  # no values, no dictionary: the rule's 1 byte is never below 0
    count = np.bincount(file, minlength=n_files)
    encoded = pc.dictionary_encode(values)
    k = len(encoded.dictionary)
    if k == len(values):
        return []  # no value repeats: each file's dictionary would be all its values again
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    # Each (file, value) pair once: marked in a table of all pairs while that is small.
    pairs = file * k + codes
    if n_files * k <= PAIR_TABLE:
        seen = np.zeros(n_files * k, bool)
        seen[pairs] = True
        key_file, key_code = np.divmod(np.flatnonzero(seen), k)
    else:
        key_file, key_code = np.divmod(pc.unique(pa.array(pairs)).to_numpy(), k)
    distinct = np.bincount(key_file, minlength=n_files)
    if np.ndim(sizes):
        plain = np.bincount(file, weights=sizes, minlength=n_files)
        per_code = np.zeros(k, np.int64)
        per_code[codes] = sizes
        dictionary = np.bincount(key_file, weights=per_code[key_code], minlength=n_files)
    else:
        plain, dictionary = count * sizes, distinct * sizes
    widths = np.ceil(np.log2(np.maximum(distinct, 1))).astype(np.int64)  # bits of the largest id
    groups = -(-count // MIN_REPEAT)
    # The ids' bytes if all are bit-packed: exact unless 8 or more equal ids follow each other.
    ids = groups * widths + -(-groups // MAX_GROUPS)
    # With such runs the ids take at least nothing and at most the dearer of a packed group and a
    # repeated run for every 8 ids; only a file the bounds leave undecided is walked.
    dearest = np.maximum(widths + 1, 5 + (widths + 7) // 8)
    undecided = (1 + dictionary < plain) & (1 + (groups + 1) * dearest + dictionary >= plain)
    if undecided.any():
        starts = np.flatnonzero(np.r_[True, (codes[1:] != codes[:-1]) | (file[1:] != file[:-1])])
        lengths = np.diff(np.r_[starts, len(codes)])
        run_file = file[starts]
        long_run = np.bincount(run_file, weights=lengths >= MIN_REPEAT, minlength=n_files) > 0
        first_run = np.searchsorted(run_file, np.arange(n_files + 1))
        for f in np.flatnonzero(undecided & long_run):
            ids[f] = ids_bytes(lengths[first_run[f] : first_run[f + 1]].tolist(), int(widths[f]))
    # The page's ids carry a one-byte bit width before them.
    return np.flatnonzero(1 + ids + dictionary < plain).tolist()
