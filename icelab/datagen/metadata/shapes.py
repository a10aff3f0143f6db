"""The shape of a metadata-scale state's Iceberg tables: their partition spec and schema.

icelab's own states are day-partitioned tables of the template's wide schema, written by
MetaBuilder.java. A shaped state (conf/meta/heldout_*.yaml) has another spec (hours or months
of `timestamp`; a category or a bucket of the id, then the day) or a narrow schema, and is
written by ShapedBuilder.java, which reads the spec from the table this module creates.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pyspark.sql.types import StructType

from icelab.core.config.metadata import MetaSizeConfig
from icelab.datagen.metadata.java import SHAPED_VERSION

BUILDER_MAIN = "icelab.metadata.ShapedBuilder"
# The identity field's values: event types the generator draws, so a category filter means
# what it means on icelab's data. Few, as a category partition has few values.
CATEGORIES = [
    "commerce.productViews",
    "search",
    "web.webinteraction.linkClicks",
    "web.webpagedetails.pageViews",
]
BUCKETS = 8
# Spark SQL's PARTITIONED BY per partitioning: the time transform last, as a table partitioned
# by a category and then the day is commonly declared.
PARTITIONED_BY = {
    "day": "days(timestamp)",
    "hour": "hours(timestamp)",
    "month": "months(timestamp)",
    "identity_day": "eventType, days(timestamp)",
    "bucket_day": f"bucket({BUCKETS}, _id), days(timestamp)",
}
# The narrow schema's top-level columns (10 leaves: search has 3, placeContext 2): the ones
# every partitioning above needs, and two small structs.
NARROW = ["_id", "timestamp", "eventType", "producedBy", "search", "placeContext", "date"]
# Position deletes as a merge-on-read table gathers them: each delete commit (a row-level
# update or delete) writes one delete file per partition of the latest days, where changes land.
DELETE_COMMITS = 10
DELETE_DAYS = 30


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def shape_key(size: MetaSizeConfig) -> dict[str, Any]:
    """What a shaped state's hash adds: its shape, and the code that writes it."""
    return {
        "partitioning": size.partitioning,
        "schema": size.columns,
        "deletes": size.deletes,
        # ShapedBuilder's declared version, as icelab's own states name MetaBuilder's.
        "builder": SHAPED_VERSION,
        "shapes": _sha(Path(__file__)),
    }


def table_schema(template: StructType, columns: str) -> StructType:
    """The template's schema, or its narrow projection (the template's order kept)."""
    if columns == "wide":
        return template
    return StructType([f for f in template.fields if f.name in NARROW])


def builder_args(size: MetaSizeConfig) -> dict[str, Any]:
    """ShapedBuilder's shape arguments (the spec itself it reads from the table)."""
    args: dict[str, Any] = {}
    if size.partitioning == "identity_day":
        args["categories"] = ",".join(CATEGORIES)
    if size.deletes == "position":
        args |= {"delete_commits": DELETE_COMMITS, "delete_days": min(DELETE_DAYS, size.days)}
    return args
