"""The doctor's entries read in the driver's JVM: per partition, the live data and delete files
of the current snapshot, summed by EntryCounts.java on a thread per driver core, so that no entry
becomes a Spark row. A data manifest is read from its Avro bytes by DataManifestScan.java, which
skips every statistic without decoding it (a manifest it cannot read, such as one of another codec,
and every delete manifest, by Iceberg's own reader, projected to the columns the sums need).

The same table as `reader.read_partitions` (Spark's `entries` metadata table, aggregated in two
Spark stages); tests/health/test_entry_counts.py holds them equal on real tables. Why two: on
10M entries the Spark aggregation took most of the doctor's read (docs/doctor.md), and a
driver without javac (a cluster node) still has the Spark one. The class is compiled once
(`icelab.core.javac`) and loaded beside Iceberg's classes through its own class loader, so the
Spark session needs no jar given at its start.
"""

from __future__ import annotations

import base64
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession

from icelab.core import javac
from icelab.health.spec import Spec

SOURCE = Path(__file__).with_name("EntryCounts.java")
# Its reader of data manifests' Avro bytes (the skipped statistics were most of the read).
SCAN = Path(__file__).with_name("DataManifestScan.java")
CLASS = "icelab.health.EntryCounts"
# EntryCounts.SUMS, in its order; then `exact`, the data manifests holding the partition.
SUMS = (
    "files",
    "bytes",
    "records",
    "small_files",
    "delete_files",
    "position_delete_files",
    "deletion_vectors",
    "equality_delete_files",
    "delete_records",
    "delete_bytes",
)
COLUMNS = ["spec_id", "key", "label", "exact", *SUMS]
MANIFESTS_LINE = "#manifests\t"


def value(token: str) -> Any:
    """A partition value from EntryCounts' typed token, in the internal form `Spec` compares."""
    kind, text = token[0], token[1:]
    if kind == "n":
        return None
    if kind == "i":
        return int(text)
    if kind == "b":
        return text == "1"
    if kind == "f":
        return float(text)
    if kind == "d":
        return Decimal(text)
    if kind == "x":
        return base64.b64decode(text)
    if kind == "s":
        return base64.b64decode(text).decode("utf-8")
    raise ValueError(f"unknown partition value token {token!r}")


def parse(text: str, specs: dict[int, Spec]) -> pd.DataFrame:
    """EntryCounts' lines as `reader.read_partitions` gives them: one row per partition holding a
    live file, sorted by spec and label; `attrs["manifests_read"]`: how many manifests were read
    from their Avro bytes (`from_bytes`) and by Iceberg's reader (`iceberg_reader`)."""
    rows = []
    read = {"from_bytes": 0, "iceberg_reader": 0}
    for line in text.splitlines():
        if line.startswith(MANIFESTS_LINE):
            _, scanned, iceberg = line.split("\t")
            read = {"from_bytes": int(scanned), "iceberg_reader": int(iceberg)}
            continue
        spec_id, key_text, *numbers = line.split("\t")
        sums = dict(zip((*SUMS, "exact"), map(int, numbers), strict=True))
        if not sums["files"] and not sums["delete_files"]:
            continue
        spec = specs.get(int(spec_id), Spec(int(spec_id), ()))
        key = tuple(value(t) for t in key_text.split("\x1f")) if spec.fields else ()
        rows.append({"spec_id": int(spec_id), "key": key, "label": spec.label(key), **sums})
    frame = pd.DataFrame(rows, columns=COLUMNS).sort_values(["spec_id", "label"], ignore_index=True)
    frame.attrs["manifests_read"] = read
    return frame


def entry_class(spark: SparkSession, jtable: Any, jar_name: str) -> Any:
    """EntryCounts' class, loaded beside the table's Iceberg classes.

    Raises:
        UserError: javac is missing or fails (the caller reads through Spark instead).
    """
    classes = javac.compiled([SOURCE, SCAN], "icelab.health", "doctor's entry counts", jar_name)
    return javac.load_class(spark.sparkContext._gateway, classes, jtable, CLASS)


def read_partitions_jvm(
    spark: SparkSession,
    jtable: Any,
    snapshot_id: int,
    specs: dict[int, Spec],
    small_file_bytes: int,
    jar_name: str,
) -> pd.DataFrame:
    """Per partition holding a live file at `snapshot_id`, its sums (`reader.read_partitions`'
    table), counted in the driver's JVM on a thread per driver core.

    Raises:
        UserError: javac is missing or fails.
    """
    cls = entry_class(spark, jtable, jar_name)
    if tuple(str(cls.getField("SUMS").get(None)).split(",")) != SUMS:
        raise RuntimeError(f"{SOURCE.name} sums other columns than entry_counts.SUMS names")
    gateway = spark.sparkContext._gateway
    jvm = gateway.jvm
    types = gateway.new_array(jvm.java.lang.Class, 4)
    types[0] = cls.getClassLoader().loadClass("org.apache.iceberg.Table")
    types[1] = jvm.java.lang.Long.TYPE
    types[2] = jvm.java.lang.Long.TYPE
    types[3] = jvm.java.lang.Integer.TYPE
    args = gateway.new_array(jvm.java.lang.Object, 4)
    args[0] = jtable
    args[1] = jvm.java.lang.Long.valueOf(str(snapshot_id))  # a Python int may arrive as an Integer
    args[2] = int(small_file_bytes)  # widened to long by the reflective call
    args[3] = jvm.java.lang.Runtime.getRuntime().availableProcessors()
    text = cls.getMethod("count", types).invoke(None, args)
    return parse(str(text or ""), specs)
