"""The schema-change checker on its own (no Spark): verdicts, reasons, the CLI's exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from icelab.core.errors import UserError
from icelab.schema.model import Column, TableState, parse_change, parse_transform
from icelab.schema.rules import HAZARD, REJECTED, SAFE, check, intended_columns, worst
from icelab.tools.schema_check import main

EXAMPLE = Path(__file__).resolve().parents[2] / "conf" / "schema_changes" / "example.yaml"
EVENTS = TableState(
    (
        Column("event_id", "long", required=True),
        Column("payload", "string"),
        Column("ts", "timestamp"),
        Column("qty", "int"),
        Column("amount", "decimal(9,2)"),
    ),
    (parse_transform("days(ts)"),),
)


def categories(state: TableState, *changes: str) -> list[str]:
    return [v.category for v in check(state, changes)]


def test_flags_drop_then_add_and_passes_a_plain_rename():
    drop, add = check(EVENTS, ["drop payload", "add payload binary"])
    assert (drop.category, add.category) == (SAFE, HAZARD)
    assert "new field id" in add.reason and "string -> binary outside the promotions" in add.reason
    assert "payload_v2" in add.alternative and "backfill" in add.alternative
    (rename,) = check(EVENTS, ["rename payload to body"])
    assert rename.category == SAFE and rename.alternative == ""
    # a name dropped before this sequence counts too
    earlier = TableState(EVENTS.columns[:1], dropped=frozenset({"payload"}))
    assert categories(earlier, "add payload string") == [HAZARD]


def test_rename_reaching_consumers_by_name_is_a_hazard():
    with_consumer = TableState(EVENTS.columns, EVENTS.partition, consumers=frozenset({"payload"}))
    (v,) = check(with_consumer, ["rename payload to body"])
    assert v.category == HAZARD and "by name" in v.reason and "switch readers" in v.alternative


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("set-type qty long", SAFE),
        ("set-type amount decimal(12,2)", SAFE),
        ("set-type amount decimal(12,3)", REJECTED),  # scale must stay
        ("set-type amount decimal(7,2)", REJECTED),
        ("set-type event_id int", REJECTED),
        ("set-type payload binary", REJECTED),
        ("require payload", REJECTED),
        ("require event_id", SAFE),
        ("optional event_id", SAFE),
        ("move amount first", SAFE),
        ("move amount after nope", REJECTED),
        ("add payload string", REJECTED),  # exists
        ("drop nope", REJECTED),
        ("drop ts", REJECTED),  # source of the current spec
        ("add note string default 'n/a'", REJECTED),  # v2
    ],
)
def test_single_changes(change, expected):
    assert categories(EVENTS, change) == [expected]


def test_partition_rules_follow_the_spec_history():
    assert categories(EVENTS, "replace-partition ts_day with bucket(4,event_id)", "drop ts") == [SAFE, HAZARD]
    assert categories(EVENTS, "drop-partition ts_day", "drop ts", "add ts timestamp") == [
        SAFE,
        HAZARD,
        HAZARD,
    ]
    v3 = TableState(EVENTS.columns, EVENTS.partition, format_version=3)
    assert categories(v3, "add note string default 'n/a'") == [SAFE]


def test_a_rejected_change_leaves_the_state_as_it_was():
    # the rejected narrowing does not apply, so the later promotion is judged from int
    verdicts = check(EVENTS, ["set-type qty decimal(3,0)", "set-type qty long"])
    assert [v.category for v in verdicts] == [REJECTED, SAFE] and worst(verdicts) == REJECTED
    assert worst([]) == SAFE


def test_intended_columns_apply_every_change_as_asked():
    cols = intended_columns(EVENTS, ["set-type event_id int", "rename payload to body", "move amount first"])
    assert [(c.name, c.type) for c in cols][:3] == [
        ("amount", "decimal(9,2)"),
        ("event_id", "int"),
        ("body", "string"),
    ]


def test_parse_forms_and_errors():
    assert parse_change("add  note string default 'n/a'").default == "n/a"
    assert parse_change("set-type amount decimal(12, 2)").type == "decimal(12,2)"
    assert parse_transform("bucket(4, event_id)").name == "event_id_bucket"
    with pytest.raises(UserError, match="bad change 'frob x'"):
        parse_change("frob x")
    with pytest.raises(UserError, match="unknown type 'text'"):
        parse_change("add c text")


def test_cli_example_exit_1_with_one_verdict_per_change(capsys):
    assert main([str(EXAMPLE)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == [SAFE, HAZARD, SAFE, HAZARD, REJECTED, REJECTED, "overall:"]
    assert out[-1] == "overall: rejected"


def test_cli_all_safe_exit_0(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text(
        "table:\n  columns: {id: long required, v: int}\nchanges: [set-type v long, rename v to w]\n"
    )
    assert main([str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "overall: safe"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("table: [1]\n", "the 'table' section needs 'columns'"),
        ("table:\n  columns: {id: long}\nchanges: [frob id]\n", "bad change 'frob id'"),
        ("table:\n  columns: {id: lng}\nchanges: [drop id]\n", "unknown type 'lng'"),
        (
            "table:\n  columns: {id: long}\n  partition: [days(ts)]\nchanges: [drop id]\n",
            "partition source 'ts'",
        ),
        ("table: {columns: {id: long}\n", "is not valid YAML"),
        ("table:\n  columns: {id: long}\n", "no changes in"),
    ],
)
def test_cli_bad_input_exit_2_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("icelab: error: ") and message in err


def test_cli_missing_file_exit_2(tmp_path, capsys):
    assert main([str(tmp_path / "none.yaml")]) == 2
    assert capsys.readouterr().err.startswith("icelab: error: cannot read")


@pytest.mark.parametrize(
    ("column", "change"),
    [
        ("ts: timestamp", "set-type ts timestamptz"),
        ("ts: timestamptz", "set-type ts timestamp"),
        ("ts: timestamp_ntz", "set-type ts timestamp_ltz"),  # Spark's spellings of the same two
    ],
)
def test_a_timestamp_never_gains_or_loses_its_zone(tmp_path, capsys, column, change):
    """Iceberg: "Cannot change column type: timestamp -> timestamptz", and back."""
    path = tmp_path / "zone.yaml"
    path.write_text(f"table:\n  columns: {{id: long required, {column}}}\nchanges: [{change}]\n")
    assert main([str(path)]) == 1
    assert capsys.readouterr().out.splitlines()[0].split()[0] == REJECTED


def test_spark_timestamps_are_icebergs_timestamptz():
    assert parse_change("set-type ts timestamp_ltz").type == "timestamptz"
    assert parse_change("add ts timestamp_ntz").type == "timestamp"


@pytest.mark.parametrize(
    "partition",
    [
        "[days(ts), bucket(16, user_id)]",  # Spark's syntax in a YAML flow list
        "\n    - days(ts)\n    - bucket(16, user_id)",
        "'days(ts), bucket(16, user_id)'",
        "[days(ts), 'ub=bucket(16, user_id)']",
    ],
)
def test_transforms_with_arguments_parse_as_spark_writes_them(tmp_path, capsys, partition):
    path = tmp_path / "part.yaml"
    path.write_text(
        "table:\n  columns: {user_id: long, ts: timestamptz}\n"
        f"  partition: {partition}\nchanges: [drop user_id]\n"
    )
    assert main([str(path)]) == 1  # the bucket's source: rejected, so the field was read
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[0] == REJECTED and "user_id" in out
