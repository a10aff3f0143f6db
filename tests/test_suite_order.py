"""The suite hands out its longest modules first (tests/conftest.py: LONGEST), so that no long
module starts when the other workers have nothing left to do."""

from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import LONGEST, REPO, pytest_collection_modifyitems


def test_each_longest_module_is_a_test_module() -> None:
    # A renamed or removed module would drop out of the order silently.
    missing = [name for name in LONGEST if not (REPO / name).is_file()]
    assert missing == []
    assert len(set(LONGEST)) == len(LONGEST)


def test_the_longest_modules_come_first_in_their_order_and_the_rest_as_collected() -> None:
    # What xdist hands out, in order, under --no-loadscope-reorder: the modules as collected.
    collected = ["tests/a/test_first.py", *reversed(LONGEST), "tests/a/test_second.py"]
    items = [
        SimpleNamespace(path=REPO / name, fixturenames=(), add_marker=lambda _: None, name=f"{name}::{i}")
        for name in collected
        for i in range(2)
    ]
    pytest_collection_modifyitems(items)
    modules = list(dict.fromkeys(item.path.relative_to(REPO).as_posix() for item in items))
    assert modules == [*LONGEST, "tests/a/test_first.py", "tests/a/test_second.py"]
    assert [item.name for item in items[:2]] == [f"{LONGEST[0]}::0", f"{LONGEST[0]}::1"]
