"""What of a query reached its scans, read from the physical plan.

Per query: the filters pushed into the scan and which of them are on nested fields (predicate
pushdown), how many leaf fields the scan reads against the columns' full width (nested schema
pruning), and whether it reads columnar batches (vectorized reads). Spark plans the same way
for every repetition, so these are facts of the (query, variant), recorded with its times.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A dotted column reference such as environment.geo.countryCode, once quoted literals are gone.
_NESTED_REF = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
# Iceberg's scan description: "<table> (branch=...) [filters=<f1>, <f2>, groupedBy=...]".
_ICEBERG_FILTERS = re.compile(r"\[filters=(.*), groupedBy=", re.DOTALL)


def leaves(data_type: Any) -> int:
    """Leaf fields of a Spark type in its JSON form (a primitive is one leaf)."""
    if not isinstance(data_type, dict):
        return 1
    kind = data_type["type"]
    if kind == "struct":
        return sum(leaves(f["type"]) for f in data_type["fields"])
    if kind == "array":
        return leaves(data_type["elementType"])
    if kind == "map":
        return leaves(data_type["keyType"]) + leaves(data_type["valueType"])
    return 1


def column_leaves(schema_json: str) -> dict[str, int]:
    """Leaf count per top-level column of a StructType's JSON."""
    return {f["name"]: leaves(f["type"]) for f in json.loads(schema_json)["fields"]}


def nested_refs(filters: str) -> set[str]:
    """Nested column references in a filter text (string literals are ignored)."""
    return set(_NESTED_REF.findall(_QUOTED.sub("''", filters)))


def _iceberg(scan: Any) -> tuple[str, set[str], str, str]:
    description = scan.scan().description()
    match = _ICEBERG_FILTERS.search(description)
    filters = match.group(1) if match else ""
    return filters, nested_refs(filters), scan.scan().readSchema().json(), scan.table().schema().json()


def _parquet(scan: Any) -> tuple[str, set[str], str, str]:
    pushed = scan.pushedDownFilters()
    found = [pushed.apply(i) for i in range(pushed.length())]
    refs = {r for f in found for r in f.references() if "." in r}
    filters = ", ".join(f.toString() for f in found)
    return filters, refs, scan.requiredSchema().json(), _catalog_schema(scan)


def _catalog_schema(scan: Any) -> str:
    """The Parquet table's full data schema. The relation's own is no help: Spark's schema
    pruning rewrites it to the pruned schema."""
    ident = scan.tableIdentifier()
    if ident.isEmpty():
        return scan.relation().dataSchema().json()
    catalog = scan.session().sessionState().catalog()
    return catalog.getTableMetadata(ident.get()).dataSchema().json()


def facts(scans: list[Any]) -> dict[str, Any]:
    """Plan facts over every scan of a query.

    Returns:
        pushed_filters: the filters handed to the scans, as each format prints them;
        nested_filters_pushed: how many distinct nested fields those filters test;
        read_leaves: leaf fields the scans read from data files;
        nested_pruned: True when a nested column is read only in part, False when nested
            columns are read whole, None when the query reads no nested column;
        vectorized: whether every scan reads columnar batches.
    """
    if not scans:
        return {}
    texts, nested, read, pruned = [], set(), 0, []
    for scan in scans:
        iceberg = scan.getClass().getSimpleName() == "BatchScanExec"
        filters, refs, read_json, full_json = (_iceberg if iceberg else _parquet)(scan)
        texts.append(filters)
        nested |= refs
        got, full = column_leaves(read_json), column_leaves(full_json)
        read += sum(got.values())
        pruned += [got[c] < full[c] for c in got if full.get(c, 1) > 1]
    return {
        "pushed_filters": " | ".join(texts),
        "nested_filters_pushed": len(nested),
        "read_leaves": read,
        "nested_pruned": any(pruned) if pruned else None,
        "vectorized": all(bool(s.supportsColumnar()) for s in scans),
    }
