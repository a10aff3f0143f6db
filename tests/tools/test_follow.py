"""`icelab.tools.follow`: a page's bash blocks run in order, as in one terminal, skipped only where
the page says why; the walk fails on a block that exits otherwise than the page expects, or a
missing expected text. CI follows both tutorials with it (.ci/run)."""

from __future__ import annotations

from pathlib import Path

from icelab.tools.follow import REPO, follow, steps

PAGE = """# A page

<!-- not followed: the clone exists -->
```bash
git clone x
```

```bash
echo one > out.txt
echo two >> out.txt
```

Some prose, then a block in another language, not run:

```python
raise SystemExit(1)
```

```bash
cat out.txt
```
"""


def test_the_figure10_tutorial_runs_the_default_job_and_skips_only_what_it_says_why(capsys):
    page = REPO / "docs" / "tutorial-figure10.md"
    followed = [s.code.strip() for s in steps(page.read_text()) if s.skipped is None]
    skipped = [s for s in steps(page.read_text()) if s.skipped is not None]
    assert "make setup" in followed
    assert ".venv/bin/python run.py experiment=manifest_8mb" in followed
    assert ".venv/bin/icelab charts" in followed
    assert [s.code.split()[0] for s in skipped] == ["git", ".venv/bin/python"]
    assert all(s.skipped for s in skipped)
    # Every followed command is runnable as written: no placeholder left to fill in.
    assert not [code for code in followed if "<" in code or ">" in code]


def test_blocks_run_in_order_in_one_directory_and_a_marked_block_is_skipped(tmp_path: Path, capsys):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert follow(page, ["two"], cwd=tmp_path) == 0
    out = capsys.readouterr().out
    assert "not followed (the clone exists)" in out
    assert "one\ntwo\n" in out
    assert "SystemExit" not in out  # a python block is not a step
    assert len(steps(PAGE)) == 3


def test_a_failing_block_stops_the_walk(tmp_path: Path, capsys):
    page = tmp_path / "page.md"
    page.write_text(PAGE.replace("echo two >> out.txt", "false\necho two >> out.txt"))
    assert follow(page, [], cwd=tmp_path) == 1
    out, err = capsys.readouterr()
    assert "block 2 exited 1, the page expects 0" in err
    assert "--- block 3" not in out


def test_an_expected_text_nobody_printed_fails(tmp_path: Path, capsys):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert follow(page, ["the study's effect: shown"], cwd=tmp_path) == 1
    assert "no block printed" in capsys.readouterr().err


def test_an_export_reaches_the_next_block_and_an_expected_exit_code_passes(tmp_path: Path, capsys):
    page = tmp_path / "page.md"
    page.write_text(
        '```bash\nexport GREETING=hello\n```\n\n<!-- exits: 3 -->\n```bash\necho "$GREETING"; exit 3\n```\n'
    )
    assert follow(page, ["hello"], cwd=tmp_path) == 0
    # The same block exiting 0 where the page expects 3 fails the walk.
    page.write_text(page.read_text().replace("exit 3", "exit 0"))
    assert follow(page, [], cwd=tmp_path) == 1
    assert "block 2 exited 0, the page expects 3" in capsys.readouterr().err
    # "exits: 3 or 0" takes either.
    page.write_text(page.read_text().replace("exits: 3", "exits: 3 or 0"))
    assert follow(page, [], cwd=tmp_path) == 0


def test_the_doctor_tutorial_makes_its_table_then_expects_advice_then_health(capsys):
    page = REPO / "docs" / "tutorial-doctor.md"
    followed = [s for s in steps(page.read_text()) if s.skipped is None]
    assert "python -m icelab.tools.spark_sql demo /tmp/icelab-demo" in followed[0].code
    # The first check advises (1) or, on a machine where the gain is within the plans' noise,
    # finds the table healthy (0): both are the page's words.
    assert [s.exits for s in followed] == [(0,), (1, 0), (0,), (0,)]
    assert [s.code.count("icelab doctor") for s in followed] == [0, 1, 1, 1]
