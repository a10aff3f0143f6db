"""The console's line of a store build's S3A requests (icelab.datagen.store_requests)."""

from icelab.datagen.store_requests import requests_line


def test_requests_are_per_commit_while_ingesting_and_per_reading_after():
    phases = {
        "ingest": {"requests": 120, "list": 30, "head": 50, "get": 4, "other": 36},
        "verify spark/parquet": {"requests": 70, "list": 0, "head": 40, "get": 30, "other": 0},
    }
    line = requests_line(phases, commits=4)
    assert line == (
        "  S3A requests ingest 120 (30.0 a commit): 30 LIST, 50 HEAD, 4 GET, 36 OTHER"
        " | verify spark/parquet 70: 40 HEAD, 30 GET"
    )
