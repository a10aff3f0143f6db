"""Iceberg table shapes written by plain Spark SQL (not icelab's generator), for the doctor's
catalogue (`experiment=doctor_catalogue`) and tests.

Each builder creates `<catalog>.db.<name>` in a Hadoop catalog the caller registered, with a few
hundred rows over a few days, and returns the table's directory. A shape catalogue grows by adding
a builder here: the SQL is what a user of Spark would type.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pyspark.sql import SparkSession

START = dt.date(2026, 1, 1)
START_S = int(dt.datetime.combine(START, dt.time(), tzinfo=dt.timezone.utc).timestamp())  # epoch seconds
COLUMNS = "id bigint, ts timestamp, v string"


def table_dir(warehouse: Path, name: str) -> Path:
    return warehouse / "db" / name


def metadata_listing(warehouse: Path, name: str) -> list[tuple[str, int]]:
    """Every file under the table's metadata/ with its size: what a read-only visit must not change."""
    meta = table_dir(warehouse, name) / "metadata"
    return sorted((p.name, p.stat().st_size) for p in meta.iterdir())


def create(
    spark: SparkSession,
    catalog: str,
    name: str,
    properties: dict[str, str] | None = None,
    partitioned_by: str | None = "days(ts)",
    columns: str = COLUMNS,
) -> str:
    """`CREATE TABLE` (partitioned by day unless told otherwise, None: unpartitioned), with the
    given table properties; its SQL name."""
    table = f"{catalog}.db.{name}"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    props = ", ".join(f"'{k}'='{v}'" for k, v in (properties or {}).items())
    spark.sql(
        f"CREATE TABLE {table} ({columns}) USING iceberg"
        + (f" PARTITIONED BY ({partitioned_by})" if partitioned_by else "")
        + (f" TBLPROPERTIES ({props})" if props else "")
    )
    return table


def append(spark: SparkSession, table: str, first_id: int, rows: int, days: int, extra: str = "") -> None:
    """One `INSERT INTO`: `rows` rows spread over `days` days from START, one commit (`extra`:
    further column expressions over `id`)."""
    spark.sql(
        f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + (id % {days}) * 86400 + id), "
        f"concat('v', id){extra} FROM range({first_id}, {first_id + rows})"
    )


def appends_of(spark: SparkSession, table: str, appends: int, rows: int, days: int, extra: str = "") -> None:
    """`appends` inserts (`append`) of `rows` rows over `days` days each, their ids apart."""
    for j in range(appends):
        append(spark, table, j * max(100, rows), rows, days, extra)


def fragmented(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 6,
    days: int = 5,
    rows: int = 50,
) -> Path:
    """`appends` inserts of `rows` rows over all `days` days each, merging off: one manifest per
    append, each spanning every day (a data file per day when `rows` >= `days`)."""
    table = create(spark, catalog, name, {"commit.manifest-merge.enabled": "false"})
    appends_of(spark, table, appends, rows, days)
    return table_dir(warehouse, name)


def one_append(spark: SparkSession, catalog: str, warehouse: Path, name: str) -> Path:
    """A single insert: one manifest."""
    append(spark, create(spark, catalog, name), 0, 50, 5)
    return table_dir(warehouse, name)


def unpartitioned(spark: SparkSession, catalog: str, warehouse: Path, name: str, appends: int = 20) -> Path:
    """`appends` inserts into a table with no partition spec: one manifest per append (merging
    off), every one of them read by any query."""
    table = create(spark, catalog, name, {"commit.manifest-merge.enabled": "false"}, partitioned_by=None)
    for j in range(appends):
        append(spark, table, j * 10, 10, 5)
    return table_dir(warehouse, name)


def merged_by_default(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 100,
    min_count: int | None = None,
) -> Path:
    """`appends` inserts with Iceberg's default manifest merging on (it merges once a snapshot
    would hold `commit.manifest.min-count-to-merge` manifests, 100 by default; `min_count` sets it
    lower so a few appends show the same layout)."""
    props = {"commit.manifest.min-count-to-merge": str(min_count)} if min_count else {}
    table = create(spark, catalog, name, props)
    for j in range(appends):
        append(spark, table, j * 10, 10, 5)
    return table_dir(warehouse, name)


def bulk_load(spark: SparkSession, catalog: str, warehouse: Path, name: str, days: int = 60) -> Path:
    """One insert of 5 rows a day over `days` days: one manifest that every window opens."""
    append(spark, create(spark, catalog, name), 0, 5 * days, days)
    return table_dir(warehouse, name)


def spec_evolved(spark: SparkSession, catalog: str, warehouse: Path, name: str, appends: int = 4) -> Path:
    """Appends under `days(ts)`, then `ALTER TABLE ... REPLACE PARTITION FIELD` to `hours(ts)` and
    as many appends again: data manifests of two specs."""
    table = create(spark, catalog, name, {"commit.manifest-merge.enabled": "false"})
    for j in range(appends):
        append(spark, table, j * 100, 50, 5)
    spark.sql(f"ALTER TABLE {table} REPLACE PARTITION FIELD days(ts) WITH hours(ts)")
    for j in range(appends, 2 * appends):
        append(spark, table, j * 100, 50, 5)
    return table_dir(warehouse, name)


def rewritten(spark: SparkSession, catalog: str, warehouse: Path, name: str) -> Path:
    """A fragmented table right after `CALL system.rewrite_manifests`."""
    where = fragmented(spark, catalog, warehouse, name)
    spark.sql(f"CALL {catalog}.system.rewrite_manifests(table => 'db.{name}')").collect()
    return where


def identity_and_time(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 6,
    days: int = 5,
    regions: int | None = None,
) -> Path:
    """Partitioned by an identity column and day (`region, days(ts)`), `appends` inserts over
    every region and day with merging off: 60 rows each, the region `id % 3`; with `regions`, a
    data file for every region and day in each (`days` x `regions` x 4 rows, the region
    `(id div days) % regions`, so every pair occurs whatever the sizes)."""
    props = {"commit.manifest-merge.enabled": "false"}
    table = create(spark, catalog, name, props, "region, days(ts)", f"{COLUMNS}, region string")
    rows = 60 if regions is None else days * regions * 4
    region = "id % 3" if regions is None else f"(id div {days}) % {regions}"
    appends_of(spark, table, appends, rows, days, extra=f", concat('r', {region})")
    return table_dir(warehouse, name)


def merge_on_read(
    spark: SparkSession, catalog: str, warehouse: Path, name: str, format_version: int = 2
) -> Path:
    """Two inserts, then a `DELETE` under `write.delete.mode=merge-on-read`: position deletes at
    format v2, deletion vectors (Puffin) at v3."""
    props = {"format-version": str(format_version), "write.delete.mode": "merge-on-read"}
    table = create(spark, catalog, name, props)
    append(spark, table, 0, 150, 3)
    append(spark, table, 1000, 150, 3)
    spark.sql(f"DELETE FROM {table} WHERE id % 10 = 0")
    return table_dir(warehouse, name)


def many_files(
    spark: SparkSession, catalog: str, warehouse: Path, name: str, tasks: int = 4, days: int = 5
) -> Path:
    """One insert whose `tasks` Spark tasks each write a file for every one of `days` days
    (`write.distribution-mode=none` and the fanout writer: no shuffle by partition, as a job
    writing straight from its input partitions does): `tasks` x `days` data files in one commit."""
    props = {"write.distribution-mode": "none", "write.spark.fanout.enabled": "true"}
    table = create(spark, catalog, name, props)
    spark.sql(
        f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + (id % {days}) * 86400 + id % 3600), "
        f"concat('v', id) FROM range(0, {tasks * days}, 1, {tasks})"
    )
    return table_dir(warehouse, name)


def hourly(
    spark: SparkSession, catalog: str, warehouse: Path, name: str, appends: int = 4, days: int = 2
) -> Path:
    """Partitioned by `hours(ts)`, `appends` inserts with merging off, each writing a file for
    every hour of `days` days: one manifest per append spanning every hour."""
    table = create(spark, catalog, name, {"commit.manifest-merge.enabled": "false"}, "hours(ts)")
    hours = days * 24
    for j in range(appends):
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + (id % {hours}) * 3600 + j), "
            f"concat('v', id) FROM (SELECT id, {j} AS j FROM range({j * hours}, {(j + 1) * hours}))"
        )
    return table_dir(warehouse, name)


def rolling(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 12,
    span: int = 3,
    step: int = 1,
    rows: int = 30,
) -> Path:
    """Partitioned by day, merging off, `appends` inserts of `rows` rows each over `span`
    consecutive days, the first day `step` later with each insert: a window of a day opens about
    `span / step` manifests, a longer one more (what a daily job with late data writes)."""
    table = create(spark, catalog, name, {"commit.manifest-merge.enabled": "false"})
    for j in range(appends):
        first = j * rows
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + ({j * step} + id % {span}) "
            f"* 86400 + id % 3600), concat('v', id) FROM range({first}, {first + rows})"
        )
    return table_dir(warehouse, name)


def unit_by_unit(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 20,
    unit: str = "day",
    span: int = 1,
    region: bool = False,
    merge: bool | None = False,
) -> Path:
    """What a scheduled job writes: `appends` inserts, the j-th of 12 rows over the `span` time
    units (`day` or `hour`) from the j-th on, partitioned by that unit (`region, days(ts)` with
    `region`: every insert writes 3 regions); merging off, on, or None at Iceberg's defaults. With
    `span` 1 each partition is planned from one manifest ("aligned"), yet a long window opens one
    manifest per unit."""
    seconds = {"day": 86400, "hour": 3600}[unit]
    spec = f"{'region, ' if region else ''}{unit}s(ts)"
    props = None if merge is None else {"commit.manifest-merge.enabled": str(merge).lower()}
    columns = f"{COLUMNS}, region string" if region else COLUMNS
    table = create(spark, catalog, name, props, spec, columns)
    extra = ", concat('r', id % 3)" if region else ""
    for j in range(appends):
        spark.sql(
            f"INSERT INTO {table} SELECT id, timestamp_seconds({START_S} + ({j} + id % {span}) * {seconds} "
            f"+ id % 60), concat('v', id){extra} FROM range({j * 12}, {j * 12 + 12})"
        )
    return table_dir(warehouse, name)


def spec_appends(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    partitioned_by: str,
    appends: int = 6,
    days: int = 5,
    rows: int = 60,
    regions: int = 3,
    deletes: int = 0,
    expire_every: int = 0,
) -> Path:
    """Partitioned by `partitioned_by` (any Spark SQL spec over `id`, `ts`, `v` and `region`),
    merging off, `appends` inserts of `rows` rows each over `days` days (the region `id % regions`);
    then `deletes` merge-on-read DELETEs of a twentieth of the rows each (format v2: position
    deletes). With `expire_every`, the snapshots older than the newest are expired every that many
    inserts, so that thousands of commits keep a small metadata.json (their manifests stay live)."""
    props = {"commit.manifest-merge.enabled": "false", "format-version": "2"}
    if deletes:
        props["write.delete.mode"] = "merge-on-read"
    table = create(spark, catalog, name, props, partitioned_by, f"{COLUMNS}, region string")
    for j in range(appends):
        append(spark, table, j * max(100, rows), rows, days, extra=f", concat('r', id % {regions})")
        if expire_every and (j + 1) % expire_every == 0:
            now = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)
            spark.sql(
                f"CALL {catalog}.system.expire_snapshots(table => 'db.{name}', "
                f"older_than => TIMESTAMP '{now:%Y-%m-%d %H:%M:%S}', retain_last => 1)"
            )
    for k in range(deletes):
        spark.sql(f"DELETE FROM {table} WHERE id % 20 = {k}")
    return table_dir(warehouse, name)


def merge_on_read_appends(
    spark: SparkSession,
    catalog: str,
    warehouse: Path,
    name: str,
    appends: int = 4,
    days: int = 3,
    deletes: int = 1,
) -> Path:
    """`appends` inserts over every one of `days` days with merging off, then `deletes` DELETEs
    under `write.delete.mode=merge-on-read` (format v2): data manifests and position-delete
    manifests, both spanning every day."""
    props = {
        "format-version": "2",
        "write.delete.mode": "merge-on-read",
        "commit.manifest-merge.enabled": "false",
    }
    table = create(spark, catalog, name, props)
    appends_of(spark, table, appends, days * 4, days)
    for k in range(deletes):
        spark.sql(f"DELETE FROM {table} WHERE id % 7 = {k}")
    return table_dir(warehouse, name)


def manifests_of(spark: SparkSession, catalog: str, name: str) -> list[str]:
    """The current snapshot's manifest paths (data and delete)."""
    return [r.path for r in spark.sql(f"SELECT path FROM {catalog}.db.{name}.manifests").collect()]


def local(path: str) -> Path:
    return Path(path.removeprefix("file:"))


def missing_manifest(spark: SparkSession, catalog: str, warehouse: Path, name: str) -> tuple[Path, str]:
    """A fragmented table one of whose current manifests was deleted (and its checksum file)."""
    where = fragmented(spark, catalog, warehouse, name, appends=3)
    gone = local(manifests_of(spark, catalog, name)[0])
    gone.unlink()
    gone.with_name(f".{gone.name}.crc").unlink(missing_ok=True)
    return where, gone.name


def corrupt_metadata(
    spark: SparkSession, catalog: str, warehouse: Path, name: str, keep_checksum: bool
) -> tuple[Path, str]:
    """A table whose current metadata.json was cut short: with its `.crc` kept, Hadoop's checksum
    catches it; without, Iceberg's JSON parser does."""
    where = fragmented(spark, catalog, warehouse, name, appends=2)
    meta = where / "metadata"
    current = meta / f"v{(meta / 'version-hint.text').read_text().strip()}.metadata.json"
    text = current.read_bytes()
    current.write_bytes(text[: len(text) // 2])
    crc = meta / f".{current.name}.crc"
    if not keep_checksum:
        crc.unlink(missing_ok=True)
    return where, current.name


def expired_keeping_files(spark: SparkSession, catalog: str, warehouse: Path, name: str) -> Path:
    """A fragmented table after `rewrite_manifests`, then snapshot expiry that leaves the expired
    snapshots' files in place (as an expiry with file cleanup off, pyiceberg's, or one that
    failed before deleting does): the old manifests and manifest lists are orphans."""
    where = rewritten(spark, catalog, warehouse, name)
    jvm = spark.sparkContext._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{catalog}.db.{name}"
    )
    now_ms = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000) + 1
    table.expireSnapshots().expireOlderThan(now_ms).retainLast(1).cleanExpiredFiles(False).commit()
    return where
