"""The doctor is a fixed point of its own advice: on a table plain Spark SQL wrote, `--copy` applies
the advised rewrite, and the doctor run on that copy finds nothing to rewrite. The target is sized
from the bytes a rewrite writes per live entry (`icelab/health/manifest_bytes.py`), not from the
table's manifests as they are, whose headers and deleted entries inflate them."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.datagen.spark_sql_shapes import identity_and_time
from tests.tools.test_doctor import doctor
from tests.warehouses import own_warehouse

CATALOG = "fixed_t"


@pytest.fixture(scope="module")
def rewritten(ctx, tmp_path_factory, results) -> tuple[dict, dict]:
    """An identity + day table of 16 appends over 20 days and 4 regions (80 entries a manifest),
    the doctor's `--copy` report on it, and the doctor's report on the copy it rewrote."""
    import io
    from contextlib import redirect_stdout

    from tests.tools.test_doctor import main, outcome

    warehouse = own_warehouse(ctx, tmp_path_factory, "fixed", CATALOG)
    table = identity_and_time(ctx.spark, CATALOG, warehouse, "events", appends=16, days=20, regions=4)
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(table), "--copy", "--keep-copy", "--results", str(results)])
    _, first, _, _ = outcome(code, out.getvalue())
    return first, warehouse


def test_the_doctor_finds_nothing_to_rewrite_on_the_copy_it_rewrote(rewritten, results, capsys):
    first, warehouse = rewritten
    assert first["applied"], "the table was not advised a rewrite"
    meant = first["states"][0]["advice"]["manifests_meant"]
    assert first["states"][1]["manifests"] == meant  # one rewrite gives the layout meant
    # The kept copy is a Hadoop table of icelab's scratch catalog: <directory>/scratch/<name>.
    kept = Path(first["scratch"]["directory"]) / "scratch" / "events_doctor_copy"
    code, again, _, out = doctor(capsys, results, str(kept))
    state = again["states"][0]
    assert code == 0 and again["verdict"] == "healthy" and again["actions"] == [], state["why"]
    assert state["manifests"] == meant


def test_the_target_is_the_rewritten_bytes_over_the_manifests_meant(rewritten):
    first, _ = rewritten
    advice = first["states"][0]["advice"]
    rewritten_bytes = first["states"][0]["manifest_bytes"]
    # Iceberg asks for ceil(bytes rewritten / target) manifests: exactly the layout meant.
    assert -(-rewritten_bytes // advice["target_bytes"]) == advice["manifests_meant"]
    # A rewrite writes live entries compressed: fewer bytes per entry than the table's manifests hold.
    assert advice["bytes_per_entry"] < rewritten_bytes / first["states"][0]["files"]["data_files"]


def test_json_dash_prints_the_report_with_the_windows_measured_predicted_and_measured_after(
    rewritten, results, capsys
):
    import json

    from tests.tools.test_doctor import main

    _, warehouse = rewritten
    table = str(Path(warehouse) / "db" / "events")
    # The copy is rewritten to the layout meant whatever the measured verdict (plans vary by machine).
    args = [table, "--copy", "--json", "-", "--measure-plans", "3"]
    code = main([*args, "--results", str(results)], True)
    report = json.loads(capsys.readouterr().out)  # standard output is the JSON alone
    assert code == report["exit_code"] and report["applied"]
    rows = {w["window"]: w for w in report["windows"]}
    assert list(rows) == ["1d", "7d", "30d"]
    for w in rows.values():
        assert w["now_measured_ms"] > 0 and w["now_measured_plans"] >= 3, w
        assert w["after_predicted_ms"] > 0 and w["after_basis"] == "measured x model ratio", w
        assert w["after_measured_ms"] > 0 and w["before_measured_ms"] > 0, w
        # The after is the plan measured now, anchored: its ratio to that plan is the one predicted.
        assert w["after_predicted_ms"] == pytest.approx(w["now_measured_ms"] * w["ratio_predicted"], rel=0.01)
