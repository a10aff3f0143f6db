"""The suite hands out the modules that start no JVM first, while the class archive is written,
then its longest modules first (tests/conftest.py: LONGEST), so that no long module starts when
the other workers have nothing left to do."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import LONGEST, REPO, SPARK_MODULES, pytest_collection_modifyitems


def test_each_longest_module_is_a_test_module() -> None:
    # A renamed or removed module would drop out of the order silently.
    missing = [name for name in LONGEST if not (REPO / name).is_file()]
    assert missing == []
    assert len(set(LONGEST)) == len(LONGEST)


class Item(SimpleNamespace):
    """What the hook reads and writes of a collected test."""

    def add_marker(self, marker) -> None:  # noqa: ANN001
        self.marks.append(marker.name)

    def get_closest_marker(self, name: str) -> str | None:
        return name if name in self.marks else None


def items_of(collected: list[str], plain: set[str]) -> list[Item]:
    """Two tests per module; those of `plain` modules start no JVM, the rest use the session."""
    return [
        Item(path=REPO / name, fixturenames=() if name in plain else ("ctx",), marks=[], name=f"{name}::{i}")
        for name in collected
        for i in range(2)
    ]


def modules_of(items: list[Item]) -> list[str]:
    return list(dict.fromkeys(item.path.relative_to(REPO).as_posix() for item in items))


def test_the_longest_modules_come_first_in_their_order_and_the_rest_as_collected() -> None:
    # What xdist hands out, in order, under --no-loadscope-reorder: the modules as collected.
    collected = ["tests/a/test_first.py", *reversed(LONGEST), "tests/a/test_second.py"]
    items = items_of(collected, plain=set())
    pytest_collection_modifyitems(items)
    assert modules_of(items) == [*LONGEST, "tests/a/test_first.py", "tests/a/test_second.py"]
    assert [item.name for item in items[:2]] == [f"{LONGEST[0]}::0", f"{LONGEST[0]}::1"]


def test_modules_that_start_no_jvm_come_before_those_that_do() -> None:
    # They run while the class archive is written; each group keeps the LONGEST order first.
    plain_long = "tests/core/test_run_deadline.py"
    assert plain_long in LONGEST and Path(plain_long).name not in SPARK_MODULES
    plain = {plain_long, "tests/a/test_plain.py", "tests/a/test_plain_too.py"}
    collected = ["tests/a/test_plain.py", "tests/a/test_jvm.py", *LONGEST, "tests/a/test_plain_too.py"]
    items = items_of(collected, plain)
    pytest_collection_modifyitems(items)
    jvm_long = [name for name in LONGEST if name != plain_long]
    assert modules_of(items) == [
        plain_long,
        "tests/a/test_plain.py",
        "tests/a/test_plain_too.py",
        *jvm_long,
        "tests/a/test_jvm.py",
    ]
    assert all(item.get_closest_marker("spark") for item in items[6:])
    assert not any(item.get_closest_marker("spark") for item in items[:6])
