"""Spark's `xxhash64` over int and bigint arguments, vectorized in numpy.

Spark chains its arguments: the hash starts at seed 42 and each argument is hashed with the
hash so far as its seed (XxHash64Function: `hashInt` for an int, `hashLong` for a bigint).
The arithmetic is XXH64's on unsigned 64-bit words; numpy's uint64 wraps the same way.
"""

from __future__ import annotations

import numpy as np

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
SPARK_SEED = 42
INT_MAX = 2**31 - 1  # a Spark SQL integer literal above this is a bigint


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _avalanche(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * _P2
    h = h ^ (h >> np.uint64(29))
    h = h * _P3
    return h ^ (h >> np.uint64(32))


def _words(value: np.ndarray | int, mask: int) -> np.ndarray:
    """The argument's bits as uint64 (an int's 32 bits, a bigint's 64)."""
    return (np.asarray(value, dtype=np.int64).astype(np.uint64)) & np.uint64(mask)


def hash_int(value: np.ndarray | int, seed: np.ndarray | np.uint64) -> np.ndarray:
    """XXH64 of a 4-byte int, as Spark's `XXH64.hashInt`."""
    with np.errstate(over="ignore"):
        return _hash_int(value, seed)


def _hash_int(value: np.ndarray | int, seed: np.ndarray | np.uint64) -> np.ndarray:
    h = seed + _P5 + np.uint64(4)
    h = h ^ (_words(value, 0xFFFFFFFF) * _P1)
    return _avalanche(_rotl(h, 23) * _P2 + _P3)


def hash_long(value: np.ndarray | int, seed: np.ndarray | np.uint64) -> np.ndarray:
    """XXH64 of an 8-byte long, as Spark's `XXH64.hashLong`."""
    with np.errstate(over="ignore"):
        return _hash_long(value, seed)


def _hash_long(value: np.ndarray | int, seed: np.ndarray | np.uint64) -> np.ndarray:
    h = seed + _P5 + np.uint64(8)
    h = h ^ (_rotl(_words(value, 0xFFFFFFFFFFFFFFFF) * _P2, 31) * _P1)
    return _avalanche(_rotl(h, 27) * _P1 + _P4)


def hash_literal(value: int, seed: np.ndarray | np.uint64) -> np.ndarray:
    """Hash an integer literal of Spark SQL: an int when it fits, else a bigint."""
    return hash_int(value, seed) if -INT_MAX - 1 <= value <= INT_MAX else hash_long(value, seed)


def start(*literals: int) -> np.uint64:
    """The chained state after Spark's seed and leading integer literals."""
    with np.errstate(over="ignore"):
        h = np.uint64(SPARK_SEED)
        for value in literals:
            h = np.uint64(hash_literal(value, h))
    return h


def signed(h: np.ndarray) -> np.ndarray:
    """The hash as Spark's bigint."""
    return np.asarray(h, dtype=np.uint64).view(np.int64)
