"""A claim is a checked predicate: `require` passes a supported verdict and names a refused one."""

from __future__ import annotations

import pytest

from icelab.analysis.claims import ClaimError, require


def test_a_supported_claim_passes_and_a_contradicted_one_names_itself_and_its_page() -> None:
    require(True, "anything the data shows")
    with pytest.raises(ClaimError, match=r"^docs/object-store.md: .* no longer support: the gap widens$"):
        require(False, "the gap widens", page="docs/object-store.md")
    with pytest.raises(ClaimError, match=r"^docs/planning.md: "):
        require(False, "the default page")
