"""README's experiment table: the metadata_scale row names the smallest and largest state the
reference run measured, not a typed range."""

from __future__ import annotations

from icelab.core.runs import find_runs, latest_runs
from icelab.core.units import short_count
from icelab.tools.docs import readme
from tests.tools.test_docs_planning import REFERENCE


def test_the_metadata_scale_row_spans_the_reference_runs_states() -> None:
    run = latest_runs(find_runs(REFERENCE))["metadata_scale"]
    files = readme.state_files(run)
    row = next(x for x in readme.experiments_table(REFERENCE.parent).splitlines() if "metadata_scale`" in x)
    assert f"on metadata of {short_count(min(files))} to {short_count(max(files))} data files" in row
    assert "200k to 10M" not in row  # the states start at the smallest one, below 200k
