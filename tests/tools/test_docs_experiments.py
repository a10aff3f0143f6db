"""icelab.tools.docs.experiments: the list of experiments is conf/experiment/'s files, each with
its command and the first clause of its header (no Spark)."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.docs.experiments import experiment_list, experiment_names, first_clause

REPO = Path(__file__).resolve().parents[2]


def test_every_file_of_conf_experiment_is_one_row() -> None:
    text = experiment_list(REPO / "results")
    names = sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml"))
    rows = [line.split("`")[1] for line in text.splitlines() if line.startswith("| `")]
    assert rows == names
    assert "| `smoke` | CI's benchmark | `python run.py experiment=smoke` |" in text


def test_a_new_file_is_listed_with_its_command_and_first_clause(tmp_path: Path) -> None:
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    (tmp_path / "conf" / "experiment" / "probe.yaml").write_text(
        "# @package _global_\n# python run.py experiment=probe dataset=tiny, after a build\n"
        "# or: icelab probe\n# A probe (of a table: its layout), then a second clause. More.\n"
        "experiment: {}\n"
    )
    text = experiment_list(tmp_path / "results")
    assert "| `probe` | A probe (of a table: its layout), then a second clause | " in text
    assert "`python run.py experiment=probe dataset=tiny` |" in text


def test_the_first_clause_ends_outside_parentheses() -> None:
    assert first_clause("One (a: b. c) two: three") == "One (a: b. c) two"
    assert first_clause("No end at all") == "No end at all"


def test_configuration_names_every_file_of_conf_experiment_and_links_to_the_table() -> None:
    text = experiment_names(REPO / "results")
    names = sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml"))
    assert f"holds {len(names)} experiments:" in text
    assert [n.strip("`.") for n in text.splitlines()[1].split(", ")] == names
    assert "(commands.md#experiments)" in text
