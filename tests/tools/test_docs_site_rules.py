"""icelab.tools.docs.site_rules: History is the nav's History section, no page outside it says how
a figure was reached, and the site's counts are its words, generated blocks included (no Spark)."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.docs import site_rules

REPO = Path(__file__).resolve().parents[2]

NAV = """nav:
  - Home: index.md
  - Reference:
      - Commands: commands.md
  - History:
      - history.md
      - Checks of the advice:
          - Check 1: check-1.md
"""


def site(root: Path, pages: dict[str, str]) -> Path:
    """A site at `root`: the nav above, a README and `pages` under docs/."""
    (root / "docs").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(NAV)
    (root / "README.md").write_text("# icelab\n\nA front door.\n")
    for name, text in pages.items():
        (root / "docs" / name).write_text(text)
    return root


def test_history_is_every_page_under_the_navs_history_section() -> None:
    assert site_rules.history_pages(REPO) >= {"history.md", "costmodel-check.md", "decision-check-7.md"}
    assert "planning.md" not in site_rules.history_pages(REPO)


def test_the_committed_pages_outside_history_say_nothing_of_how_a_figure_was_reached() -> None:
    assert site_rules.history_words(REPO) == []


def test_an_issue_a_stop_or_a_last_change_outside_history_is_named(tmp_path: Path) -> None:
    said = "The table had more rows until issue 74.\n"
    root = site(tmp_path, {"commands.md": said, "history.md": said, "check-1.md": "Since stop 9.\n"})
    assert site_rules.history_words(root) == ["docs/commands.md:1: The table had more rows until issue 74."]
    (root / "docs" / "commands.md").write_text("Its last change moved it. Stop 3 ended it.\n")
    found = site_rules.history_words(root)
    assert found == ["docs/commands.md:1: Its last change moved it. Stop 3 ended it."]
    (root / "docs" / "commands.md").write_text("An issue of the planner: 3 stops. The change is last.\n")
    assert site_rules.history_words(root) == []


def test_the_counts_include_generated_words_and_the_longest_page_is_outside_history(tmp_path: Path) -> None:
    block = "<!-- generated:x -->\none two three four five\n<!-- /generated:x -->\n"
    long_history = "Words. " * 50
    pages = {"commands.md": f"# Commands\n\n{block}A short page.\n", "history.md": long_history}
    root = site(tmp_path, pages)
    found = site_rules.counts(root)
    assert found.generated == 5
    # README 5; commands.md 16 (its block's markers count: 3 words each, as `wc -w` counts); history.md 50.
    assert found.words == 5 + 16 + 50
    assert found.longest_page == ("docs/commands.md", 16)
    assert "site: 71 words (5 in generated blocks)" in found.line()


def test_each_limit_passed_is_one_line_and_a_site_inside_them_has_none(tmp_path: Path, monkeypatch) -> None:
    sentence = " ".join(["word"] * 41) + "."
    root = site(tmp_path, {"commands.md": "Short. " * 30, "history.md": "Long. " * 60, "check-1.md": "x"})
    monkeypatch.setattr(site_rules, "SITE_WORDS", 100)
    monkeypatch.setattr(site_rules, "PAGE_WORDS", 40)
    assert site_rules.breaches(root) == []  # 5 + 30 + 60 + 1 words; history.md is under History
    (root / "docs" / "commands.md").write_text(f"Short. {sentence}\n")
    (root / "docs" / "history.md").write_text("Long. " * 70)
    assert site_rules.breaches(root) == [
        "site: 118 words, over the limit of 100",
        "docs/commands.md: 42 words, over the page limit of 40",
        "commands.md:1: a sentence of 41 words, over the limit of 40",
    ]


def test_the_committed_site_is_inside_its_limits() -> None:
    assert site_rules.breaches(REPO) == []


def test_the_page_generators_stay_under_2200_lines() -> None:
    """The house's size for icelab/tools/docs/ (its templates apart): past it, a page's figures
    are better cut than coded."""
    modules = sorted((REPO / "icelab" / "tools" / "docs").glob("*.py"))
    assert len(modules) > 20
    assert sum(len(m.read_text().splitlines()) for m in modules) <= 2_200
