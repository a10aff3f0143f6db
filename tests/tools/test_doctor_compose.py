"""The doctor's config: composed once per process for the same `--set` overrides, each table
getting its own copy."""

from __future__ import annotations

import pytest

from icelab.core.errors import UserError
from icelab.tools.doctor import compose, parser


def test_each_table_gets_its_own_copy_of_one_composition():
    args = parser().parse_args(["a", "b", "--set=charts=false", "--window", "1d"])
    first = compose(args, "a")
    second = compose(args, "b")
    assert (first.table, second.table) == ("a", "b")
    assert first.charts is False and list(first.experiment.windows) == ["1d"]
    master = first.engine.master
    # A run that changed its config leaves the next one's alone.
    first.engine.master = "spark://elsewhere:7077"
    assert compose(args, "c").engine.master == master


def test_a_bad_override_is_refused_every_time():
    args = parser().parse_args(["a", "--set=no_such_key=1"])
    for _ in range(2):
        with pytest.raises(UserError):
            compose(args, "a")
