"""The schema-evolution scenarios as data, and how each change is applied to a real table.

A scenario is a base table, a sequence of changes in the checker's text form
(`icelab.schema.rules`), the column it follows (its name before and after), and what its plain
Parquet equivalent is. The same parsed changes drive the engine here and the checker, so the
checker judges exactly what the engine ran.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from icelab.core.iceberg import load_table
from icelab.schema.model import Change, Column, TableState, parse_change, parse_transform, parse_type


@dataclass(frozen=True)
class Base:
    """A base table: columns, partition transforms (Spark DDL) and format version."""

    name: str
    columns: tuple[Column, ...]
    partition: tuple[str, ...]
    format_version: int = 2


EVENTS = Base(
    "events",
    (
        Column("event_id", "long", required=True),
        Column("payload", "string"),
        Column("ts", "timestamptz"),
        Column("qty", "int"),
        Column("score", "float"),
        Column("ratio", "double"),
        Column("amount", "decimal(9,2)"),
    ),
    ("days(ts)",),
)
EVENTS_V3 = replace(EVENTS, name="events_v3", format_version=3)
# The reference program's table exactly: two columns, unpartitioned, so its ids are 1 and 2.
REFERENCE = Base("reference", (Column("event_id", "long", required=True), Column("payload", "string")), ())

_BY_NAME = "old files keep the base schema, new files are written with the changed schema; read back by name"


@dataclass(frozen=True)
class Scenario:
    """One scenario.

    Attributes:
        name: its key in `experiment.scenarios`.
        changes: the change sequence, in `icelab.schema.model.Change` text form.
        column: the column followed, by its name before the change.
        column_after: the name queried after the change (None: the column is gone on purpose).
        what: what the scenario shows.
        parquet: what its plain Parquet equivalent is.
        base: the table it starts from.
        consumers: columns a reader outside Iceberg queries by name.
    """

    name: str
    changes: tuple[str, ...]
    column: str
    column_after: str | None
    what: str
    parquet: str = _BY_NAME
    base: Base = EVENTS
    consumers: tuple[str, ...] = ()

    def parsed(self) -> list[Change]:
        """The changes, parsed."""
        return [parse_change(c) for c in self.changes]


def _rejected(name: str, change: str, column: str, what: str) -> Scenario:
    return Scenario(
        name,
        (change,),
        column,
        column,
        what,
        "Parquet has no schema authority: new files are simply written with the new type; "
        "read back by name with mergeSchema",
    )


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in [
        Scenario(
            "reference",
            ("drop payload", "add payload binary"),
            "payload",
            "payload",
            "the reference program: drop payload, re-add it as binary (field ids 1,2 -> 1 -> 1,3)",
            base=REFERENCE,
        ),
        Scenario("rename", ("rename payload to body",), "payload", "body", "a plain rename"),
        Scenario(
            "rename_consumer",
            ("rename payload to body",),
            "payload",
            "body",
            "a rename while a reader outside Iceberg queries 'payload' by name",
            consumers=("payload",),
        ),
        Scenario(
            "drop_add",
            ("drop payload", "add payload string"),
            "payload",
            "payload",
            "drop then add with the same name and type",
            "Parquet has no drop: new files write 'payload' again; a reader by name sees old and new",
        ),
        Scenario(
            "drop_add_binary",
            ("drop payload", "add payload binary"),
            "payload",
            "payload",
            "drop then add as binary, to 'change the type'",
        ),
        Scenario(
            "rename_add",
            ("rename payload to payload_v1", "add payload binary"),
            "payload",
            "payload_v1",
            "the deliberate variant: rename the old column away, add a new one under the name",
        ),
        Scenario("widen_int_long", ("set-type qty long",), "qty", "qty", "promotion int -> long"),
        Scenario(
            "widen_float_double", ("set-type score double",), "score", "score", "promotion float -> double"
        ),
        Scenario(
            "widen_decimal", ("set-type amount decimal(12,2)",), "amount", "amount", "decimal(9,2) -> (12,2)"
        ),
        _rejected("reject_string_binary", "set-type payload binary", "payload", "string -> binary in place"),
        _rejected("reject_long_int", "set-type event_id int", "event_id", "long -> int"),
        _rejected("reject_double_float", "set-type ratio float", "ratio", "double -> float"),
        _rejected("reject_decimal_narrow", "set-type amount decimal(7,2)", "amount", "decimal(9,2) -> (7,2)"),
        _rejected("reject_required", "require payload", "payload", "optional -> required"),
        Scenario("reorder", ("move amount first",), "amount", "amount", "move a column first"),
        Scenario(
            "add_default",
            ("add note string default 'n/a'",),
            "note",
            "note",
            "add a column with a default on a format v3 table",
            "Parquet has no defaults: old files lack the column, a reader by name gets NULL",
            base=EVENTS_V3,
        ),
        Scenario(
            "add_default_v2",
            ("add note string default 'n/a'",),
            "note",
            "note",
            "the same on a format v2 table",
            "Parquet has no defaults: old files lack the column, a reader by name gets NULL",
        ),
        Scenario(
            "partition_source_drop",
            ("drop ts",),
            "ts",
            "ts",
            "drop the source column of the current partition spec",
            "Hive-style Parquet: the partition column is a directory name; here the column is simply "
            "left out of new files",
        ),
        Scenario(
            "old_partition_source_drop",
            ("replace-partition ts_day with bucket(4,event_id)", "drop ts"),
            "ts",
            None,
            "Iceberg #5676: drop a column that was the source of an older partition spec",
            "new files leave the column out; old files keep it",
        ),
        Scenario(
            "readd_partition_name",
            ("drop-partition ts_day", "drop ts", "add ts timestamptz"),
            "ts",
            "ts",
            "Iceberg #10487: drop a partition field and its column, add a column of the same name",
        ),
    ]
}


# ---- Iceberg tables through Spark and the Java API --------------------------------------------

# Spark's TIMESTAMP carries a zone (Iceberg's timestamptz); Iceberg's timestamp is TIMESTAMP_NTZ.
_SPARK_TYPE = {"long": "bigint", "timestamptz": "timestamp", "timestamp": "timestamp_ntz"}


def spark_type(type_: str) -> str:
    """The checker's type name as Spark DDL writes it."""
    return _SPARK_TYPE.get(type_, type_)


def create_sql(table: str, base: Base) -> str:
    """CREATE TABLE for a base table."""
    cols = ", ".join(
        f"{c.name} {spark_type(c.type)}{' NOT NULL' if c.required else ''}" for c in base.columns
    )
    parts = f" PARTITIONED BY ({', '.join(base.partition)})" if base.partition else ""
    props = f"TBLPROPERTIES ('format-version' = '{base.format_version}')"
    return f"CREATE TABLE {table} ({cols}) USING iceberg{parts} {props}"


def _value_sql(col: Column) -> str:
    """A deterministic value per row id; optional columns are NULL on every 10th row."""
    t = col.type
    if t.startswith("timestamp"):  # four days from 2024-01-01
        seconds = "timestamp_seconds(1704067200 + (id % 4) * 86400 + id)"
        return seconds if t == "timestamptz" else f"CAST({seconds} AS {spark_type(t)})"
    if t.startswith("decimal"):
        expr = f"CAST((id % 1000) / 100 AS {t})"
    else:
        expr = {
            "long": "id",
            "int": "CAST(id AS INT)",
            "float": "CAST(id / 2 AS FLOAT)",
            "double": "CAST(id / 4 AS DOUBLE)",
            "string": f"concat('{col.name}-', id)",
            "binary": f"CAST(concat('{col.name}-', id) AS BINARY)",
            "boolean": "id % 2 = 0",
            "date": "date_add(DATE '2024-01-01', CAST(id % 4 AS INT))",
        }[t]
    return expr if col.required else f"CASE WHEN id % 10 = 0 THEN NULL ELSE {expr} END"


def rows(spark: SparkSession, columns: list[Column] | tuple[Column, ...], start: int, end: int) -> DataFrame:
    """Rows with ids [start, end) for these columns (event_id is the row id)."""
    exprs = [f"{_value_sql(c)} AS {c.name}" if c.name != "event_id" else "id AS event_id" for c in columns]
    return spark.range(start, end, numPartitions=1).selectExpr(*exprs)


def field_ids(spark: SparkSession, table: str) -> list[dict[str, Any]]:
    """The current schema's top-level columns: id, name, type, required."""
    return [
        {"id": int(c.fieldId()), "name": c.name(), "type": str(c.type()), "required": bool(c.isRequired())}
        for c in load_table(spark, table).schema().columns()
    ]


_JAVA_TRANSFORM = {"day": "days", "hour": "hours", "month": "months", "year": "years"}


def _transform_text(transform: str, source: str) -> str | None:
    if transform == "identity":
        return source
    if transform in _JAVA_TRANSFORM:
        return f"{_JAVA_TRANSFORM[transform]}({source})"
    if transform.startswith(("bucket[", "truncate[")):
        func, n = transform.rstrip("]").split("[")
        return f"{func}({n},{source})"
    return None  # void: a field dropped from a v1 spec


def live_state(spark: SparkSession, table: str, consumers: tuple[str, ...] = ()) -> TableState:
    """The checker's view of a live table: columns, current spec, older specs' sources, dropped names."""
    t = load_table(spark, table)
    schema = t.schema()
    columns = tuple(
        Column(c.name(), parse_type(str(c.type())), bool(c.isRequired())) for c in schema.columns()
    )
    names = {c.name for c in columns}

    def source(field: Any) -> str | None:
        col = schema.findColumnName(field.sourceId())
        return None if col is None else str(col)

    current = []
    for f in t.spec().fields():
        src = source(f)
        text = src and _transform_text(str(f.transform()), src)
        if text:
            current.append(parse_transform(text, f.name()))
    past = {
        src
        for spec in t.specs().values()
        if spec.specId() != t.spec().specId()
        for f in spec.fields()
        if (src := source(f))
    }
    seen = {str(c.name()) for s in t.schemas().values() for c in s.columns()}
    fmt = int(t.operations().current().formatVersion())
    return TableState(
        columns, tuple(current), frozenset(past), frozenset(seen - names), frozenset(consumers), fmt
    )


def change_sql(table: str, c: Change) -> str:
    """The Spark SQL DDL of one change."""
    alter = f"ALTER TABLE {table}"
    if c.op == "add":
        default = "" if c.default is None else f" DEFAULT '{c.default}'"
        return f"{alter} ADD COLUMN {c.column} {spark_type(c.type or '')}{default}"
    if c.op == "drop":
        return f"{alter} DROP COLUMN {c.column}"
    if c.op == "rename":
        return f"{alter} RENAME COLUMN {c.column} TO {c.target}"
    if c.op == "set-type":
        return f"{alter} ALTER COLUMN {c.column} TYPE {spark_type(c.type or '')}"
    if c.op in ("require", "optional"):
        return f"{alter} ALTER COLUMN {c.column} {'SET' if c.op == 'require' else 'DROP'} NOT NULL"
    if c.op == "move":
        where = "FIRST" if c.target == "first" else f"AFTER {(c.target or '').removeprefix('after ')}"
        return f"{alter} ALTER COLUMN {c.column} {where}"
    if c.op == "drop-partition":
        return f"{alter} DROP PARTITION FIELD {c.column}"
    if c.op == "add-partition":
        return f"{alter} ADD PARTITION FIELD {c.target}"
    return f"{alter} REPLACE PARTITION FIELD {c.column} WITH {c.target}"


def has_java_route(c: Change) -> bool:
    """Changes Spark SQL refuses before Iceberg sees them, or cannot express, but Iceberg's API can."""
    return c.op in ("set-type", "require") or (c.op == "add" and c.default is not None)


def _java_type(spark: SparkSession, type_: str) -> Any:
    types = spark._jvm.org.apache.iceberg.types.Types
    if type_.startswith("decimal"):
        p, s = type_[8:-1].split(",")
        return types.DecimalType.of(int(p), int(s))
    if type_ == "timestamptz":
        return types.TimestampType.withZone()
    if type_ == "timestamp":
        return types.TimestampType.withoutZone()
    name = {"int": "IntegerType", "long": "LongType"}.get(type_, type_.capitalize() + "Type")
    return getattr(types, name).get()


def apply_java(spark: SparkSession, table: str, c: Change) -> None:
    """Apply a change through Iceberg's UpdateSchema API (raises Iceberg's own error)."""
    update = load_table(spark, table).updateSchema()
    if c.op == "set-type":
        update = update.updateColumn(c.column, _java_type(spark, c.type or ""))
    elif c.op == "require":
        update = update.requireColumn(c.column)
    else:
        literal = spark._jvm.org.apache.iceberg.expressions.Literal.of(c.default)
        if c.type != "string":
            literal = literal.to(_java_type(spark, c.type or ""))
        update = update.addColumn(
            c.column, _java_type(spark, c.type or ""), "icelab schema_evolution", literal
        )
    update.commit()


def engine_error(exc: BaseException) -> dict[str, str]:
    """Class, message and origin (iceberg or spark) of an engine exception.

    Spark wraps Iceberg's exceptions, so the cause chain is searched for the first one thrown
    from Iceberg's code; failing that, the innermost cause is reported.
    """
    throwable = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    chain = []
    while throwable is not None:
        chain.append(throwable)
        throwable = throwable.getCause()
    if not chain:
        return {"class": type(exc).__name__, "message": _first_line(str(exc)), "origin": "python"}

    def from_iceberg(t: Any) -> bool:
        frames = t.getStackTrace()
        top = frames[0].getClassName() if len(frames) else ""
        return t.getClass().getName().startswith("org.apache.iceberg") or top.startswith("org.apache.iceberg")

    pick = next((t for t in chain if from_iceberg(t)), chain[-1])
    return {
        "class": str(pick.getClass().getName()),
        "message": _first_line(str(pick.getMessage())),
        "origin": "iceberg" if from_iceberg(pick) else "spark",
    }


def _first_line(text: str) -> str:
    """The first line, joined with the next when it only introduces it ('...:')."""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()] or [""]
    head = lines[0]
    return f"{head} {lines[1]}" if head.endswith(":") and len(lines) > 1 else head
