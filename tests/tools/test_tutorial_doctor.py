"""docs/tutorial-doctor.md followed in the tests' session: its SQL makes the table (plain Spark
SQL, in a Hadoop catalog `demo`), and its `icelab doctor` commands run in order, parsed from the
page. CI follows the page word for word in new processes (`icelab.tools.follow`, .ci/run).

Two departures, both outside the page's words: `export TABLE=...` points at the test's own
warehouse instead of /tmp, so two checkouts' suites never share a table; and each command gets the tests'
engine settings and `--measure-plans 0` (`tests.tools.test_doctor.main`): it reuses the tests'
JVM (C1 only), whose plans are too noisy to decide on, so the calibration decides, as in
test_doctor_verdict.py. Each runs in this process, in the test's directory, so its default
`results/` is the test's own."""

from __future__ import annotations

import io
import os
import re
import shlex
from contextlib import redirect_stdout
from pathlib import Path

from icelab.tools.spark_sql import statements
from tests.tools.test_doctor import main
from tests.warehouses import own_warehouse

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tutorial-doctor.md"


def blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of `language`, in page order."""
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_doctor_tutorial_runs_as_written(ctx, tmp_path_factory, tmp_path, monkeypatch) -> None:
    page = PAGE.read_text()
    warehouse = own_warehouse(ctx, tmp_path_factory, "tutorial", "demo")
    make, *checks = blocks(page, "bash")
    assert make.startswith(".venv/bin/python -m icelab.tools.spark_sql demo ")
    for statement in statements(make.split("<<'SQL'\n", 1)[1].rsplit("SQL\n", 1)[0]):
        ctx.spark.sql(statement)
    monkeypatch.chdir(tmp_path)
    codes = []
    for line in (line for block in checks for line in block.splitlines() if line.strip()):
        if line.startswith("export TABLE="):
            monkeypatch.setenv("TABLE", str(warehouse / "db" / "events"))
            continue
        argv = shlex.split(os.path.expandvars(line))
        assert argv[:2] == [".venv/bin/icelab", "doctor"], line
        out = io.StringIO()
        with redirect_stdout(out):
            codes.append(main(argv[2:]))
        print(out.getvalue())
    # As the page says: a rewrite advised (1), the copy healthy after its rewrite (0), apply (0).
    assert codes[0] == 1, codes
    assert codes[1:] == [0, 0], codes
