"""An order-insensitive checksum that Spark and DuckDB compute the same way.

Each row becomes one canonical string (leaves printed in a fixed, engine-neutral form;
map entries sorted, since maps have no order), hashed with md5; the checksum of a set of
rows is the sum of the first 60 bits of those hashes. Summing makes it independent of row
order and of how rows are split into files, partitions or tasks.
"""

from __future__ import annotations

from typing import Literal

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegralType,
    MapType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

Dialect = Literal["spark", "duckdb"]
NULL = "'\\\\N'"  # the two characters \N, as SQL in both dialects
_NULL_DUCK = "'\\N'"


def _null(dialect: Dialect) -> str:
    return NULL if dialect == "spark" else _NULL_DUCK


def _ident(name: str, dialect: Dialect) -> str:
    return f"`{name}`" if dialect == "spark" else f'"{name}"'


def _leaf(expr: str, dtype: DataType, dialect: Dialect) -> str:
    """A non-null-safe string form of one scalar value."""
    if isinstance(dtype, StringType):
        return expr
    if isinstance(dtype, (IntegralType, BooleanType)):
        return f"cast({expr} as {'string' if dialect == 'spark' else 'varchar'})"
    if isinstance(dtype, (DoubleType, FloatType)):
        # Fixed-point text: both engines print decimal(38,6) identically; the generator
        # only makes values with at most 4 decimals, so rounding never sits on a tie.
        target = "string" if dialect == "spark" else "varchar"
        return f"cast(cast({expr} as decimal(38,6)) as {target})"
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        if dialect == "spark":
            return f"cast(unix_micros({expr}) as string)"
        return f"cast(epoch_us({expr}) as varchar)"
    if isinstance(dtype, DateType):
        if dialect == "spark":
            return f"cast(unix_date({expr}) as string)"
        return f"cast(datediff('day', DATE '1970-01-01', {expr}) as varchar)"
    raise TypeError(f"no canonical form for {dtype.simpleString()}")


def value_sql(expr: str, dtype: DataType, dialect: Dialect, depth: int = 0) -> str:
    """Canonical, null-marked string of any value (struct, array, map or scalar)."""
    null = _null(dialect)
    var = f"x{depth}"
    if isinstance(dtype, StructType):
        parts = [
            value_sql(f"{expr}.{_ident(f.name, dialect)}", f.dataType, dialect, depth) for f in dtype.fields
        ]
        body = f"concat('{{', concat_ws('|', {', '.join(parts)}), '}}')"
    elif isinstance(dtype, ArrayType):
        elem = value_sql(var, dtype.elementType, dialect, depth + 1)
        if dialect == "spark":
            body = f"concat('[', array_join(transform({expr}, {var} -> {elem}), ','), ']')"
        else:
            body = f"'[' || array_to_string(list_transform({expr}, lambda {var}: {elem}), ',') || ']'"
    elif isinstance(dtype, MapType):
        key = value_sql(f"{var}.key", dtype.keyType, dialect, depth + 1)
        val = value_sql(f"{var}.value", dtype.valueType, dialect, depth + 1)
        entry = f"concat({key}, '=', {val})"
        if dialect == "spark":
            body = f"concat('<', array_join(array_sort(transform(map_entries({expr}), {var} -> {entry})), ','), '>')"
        else:
            body = f"'<' || array_to_string(list_sort(list_transform(map_entries({expr}), lambda {var}: {entry})), ',') || '>'"
    else:
        body = _leaf(expr, dtype, dialect)
    return f"coalesce({body}, {null})"


def row_sql(schema: StructType, dialect: Dialect) -> str:
    """Canonical string of a whole row, columns in the schema's order."""
    cols = [value_sql(_ident(f.name, dialect), f.dataType, dialect) for f in schema.fields]
    return f"concat_ws('|', {', '.join(cols)})"


def row_hash_sql(schema: StructType, dialect: Dialect) -> str:
    """First 60 bits of the row's md5 as an exact integer (decimal in Spark)."""
    digest = f"substr(md5({row_sql(schema, dialect)}), 1, 15)"
    if dialect == "spark":
        return f"cast(conv({digest}, 16, 10) as decimal(38,0))"
    return f"cast(('0x' || {digest})::BIGINT as HUGEINT)"
