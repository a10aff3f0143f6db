"""The metadata builders' declared versions (icelab.datagen.metadata.java): which sources each
version was checked for.

A state's hash names its builder's version, not its sources, so that a refactoring of the Java
keeps every state's hash and the stored results named by it. That holds only while the sources
write the version's entries, so each version lists the sources (builder_sources_sha: the
builder's file, then BuilderBase.java) checked to write them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.datagen.metadata import java

# version -> the sources that write its entries. A sha joins a version's list only once a state
# built by those sources was shown to hold what a state built by the version's first sources
# holds: every column of each layout's `entries` table but the snapshot id (a random id), and the
# builder's manifests byte for byte but for their Avro sync markers (random per file).
CHECKED = {
    # MetaBuilder's: split around BuilderBase.java (the version is its single file's digest).
    java.BUILDER_VERSION: {"5082674a8980"},
    # ShapedBuilder's, likewise.
    java.SHAPED_VERSION: {"ebe80d4e8e76"},
}


@pytest.mark.parametrize(
    ("version", "source"),
    [(java.BUILDER_VERSION, java.SOURCE), (java.SHAPED_VERSION, java.SHAPED_SOURCE)],
    ids=["MetaBuilder", "ShapedBuilder"],
)
def test_the_builder_sources_were_checked_for_their_version(version: str, source: Path) -> None:
    sha = java.builder_sources_sha(source)
    assert sha in CHECKED[version], (
        f"{source.name} and {java.SHARED_SOURCE.name} (sha {sha}) are not listed for version {version} "
        "in tests/datagen/test_builder_version.py. Sources that write other entries need a new "
        "version in icelab/datagen/metadata/java.py (and so new state hashes). Sources that write "
        "the same entries (a refactoring: build a state with the old and the new sources and compare "
        "every entry) may be added to that version's list."
    )
