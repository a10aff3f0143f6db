"""notebooks/analysis.ipynb runs top to bottom on the committed fixture of results."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "results"


def test_notebook_executes_on_the_fixture(monkeypatch):
    monkeypatch.setenv("ICELAB_RESULTS", str(FIXTURE))  # the kernel inherits it
    notebook = nbformat.read(ROOT / "notebooks" / "analysis.ipynb", as_version=4)
    # Raises CellExecutionError, naming the cell, if any cell fails.
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2  # Figure 8 and Figure 10
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    # The fixture holds two manifest_8mb runs, one on small and one on medium: they are compared.
    assert "a = manifest_8mb/20261121T114058Z-ef97e6, b = manifest_8mb/20261121T114416Z-ac7555" in text
    assert "warning: datasets differ: small-401aede443e7 vs medium-4149ea9e8a87" in text
    assert "verdicts:" in text
