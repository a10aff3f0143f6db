"""MkDocs hooks of the docs site (`make docs-site`): the charts the pages show, from results/.

The pages link charts where the repository keeps them (`../results/reference/...`), so that
they show on GitHub too. That path is outside docs/, and MkDocs's strict build would call each
link broken; this hook adds every chart a page links to the site's files, under the same path.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

# A Markdown link or image whose target is a file of results/, relative to a page of docs/.
RESULTS_LINK = re.compile(r"\]\(((?:\.\./)+results/[^)#\s]+)\)")


def linked_results(docs: Path) -> dict[str, Path]:
    """Every results/ file a page links to: its URI as the page resolves it, and its file."""
    found: dict[str, Path] = {}
    for page in docs.rglob("*.md"):
        for link in RESULTS_LINK.findall(page.read_text()):
            target = (page.parent / link).resolve()
            uri = Path(page.relative_to(docs).parent, link).as_posix()
            # The URI as MkDocs normalises it (`a/../..` collapses, a leading `..` stays).
            parts: list[str] = []
            for part in uri.split("/"):
                if part == ".." and parts and parts[-1] != "..":
                    parts.pop()
                elif part not in ("", "."):
                    parts.append(part)
            if target.is_file():
                found["/".join(parts)] = target
    return found


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the linked results/ files, copied to the site under results/ (without the `../`)."""
    for uri, path in linked_results(Path(config.docs_dir)).items():
        # Included by name: MkDocs's default exclusion (`.*`) would match the leading `..`.
        file = File.generated(config, uri, abs_src_path=str(path), inclusion=InclusionLevel.INCLUDED)
        file.dest_uri = uri.lstrip("./")
        files.append(file)
    return files
