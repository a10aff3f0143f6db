"""Deterministic random draws as Spark SQL expressions.

Every draw is a pure function of (seed, key, salt) through xxhash64, never of partitioning
or row order, so the same seed yields the same rows at any parallelism. Spark's rand(seed)
depends on the partition index and is therefore never used.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

_MANTISSA = 9007199254740991  # 2**53 - 1: the bits a double holds exactly
_SCALE = "9007199254740992D"


def salt(name: str) -> int:
    """A stable integer for a draw's name (crc32: same in every Python process)."""
    return zlib.crc32(name.encode("utf-8"))


def sql_str(value: str) -> str:
    """A Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class Draws:
    """Builds uniform and categorical draws keyed by a seed.

    Args:
        seed: the dataset seed.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def u(self, name: str, key: str = "id", extra: str | None = None) -> str:
        """Uniform double in [0, 1) for this key and draw name."""
        args = f"{self.seed}, {key}, {salt(name)}" + (f", {extra}" if extra else "")
        return f"((xxhash64({args}) & {_MANTISSA}) / {_SCALE})"

    def index(self, name: str, n: int, key: str = "id", skew: float = 1.0) -> str:
        """Integer in [0, n): uniform at skew 1, power-law toward 0 above it."""
        u = self.u(name, key)
        drawn = u if skew == 1.0 else f"pow({u}, {skew})"
        return f"cast(floor({n} * {drawn}) as int)"

    def choice(self, name: str, values: Sequence[str], key: str = "id") -> str:
        """One of `values`, uniformly."""
        arr = "array(" + ", ".join(sql_str(v) for v in values) + ")"
        return f"element_at({arr}, {self.index(name, len(values), key)} + 1)"

    def weighted(self, name: str, weighted: Sequence[tuple[str, float]], key: str = "id") -> str:
        """One of the values with the given relative weights (a CASE over the CDF)."""
        total = sum(w for _, w in weighted)
        u = self.u(name, key)
        cum, branches = 0.0, []
        for value, weight in weighted[:-1]:
            cum += weight / total
            branches.append(f"WHEN {u} < {cum!r} THEN {sql_str(value)}")
        return f"CASE {' '.join(branches)} ELSE {sql_str(weighted[-1][0])} END"

    def chance(self, name: str, p: float, key: str = "id") -> str:
        """A boolean that is true with probability p."""
        return f"({self.u(name, key)} < {p!r})"

    def money(self, name: str, lo: float, hi: float, key: str = "id") -> str:
        """A price in [lo, hi) with whole cents, so every engine prints it the same."""
        cents = f"floor({self.u(name, key)} * {int((hi - lo) * 100)})"
        return f"cast(({int(lo * 100)} + {cents}) / 100D as double)"
