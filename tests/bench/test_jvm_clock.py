"""The driver's clocks (icelab.bench.jvm_clock): Hadoop's pause monitor, one per driver JVM."""

from __future__ import annotations

import gc

from icelab.bench import jvm_clock


class Gateway:
    """Stands for a py4j gateway object in the monitor cache (only its identity counts there)."""


def test_the_sessions_jvm_has_one_pause_monitor_and_a_pause_total(ctx) -> None:  # noqa: ANN001
    first = jvm_clock._jvm_pause_monitor(ctx.spark)
    assert jvm_clock._jvm_pause_monitor(ctx.spark) is first
    assert jvm_clock.JvmClock(ctx.spark).pause_ms() >= 0


def test_each_gateway_gets_a_monitor_of_its_own() -> None:
    one, other = Gateway(), Gateway()
    assert jvm_clock._cached(one, lambda: "one's") == "one's"
    assert jvm_clock._cached(other, lambda: "other's") == "other's"
    assert jvm_clock._cached(one, lambda: "a second start") == "one's"


def test_a_dropped_gateways_monitor_goes_with_it() -> None:
    # What a fresh_jvm run does: the old gateway is dropped and a new one is made. Keyed by
    # id(gateway), the dead JVM's monitor stayed behind for any new gateway at the same address
    # (CPython reuses freed addresses, at times); nothing may stay behind for one to find.
    held = len(jvm_clock._jvm_pauses)
    old = Gateway()
    jvm_clock._cached(old, lambda: "the dead JVM's monitor")
    assert len(jvm_clock._jvm_pauses) == held + 1
    del old
    gc.collect()
    assert len(jvm_clock._jvm_pauses) == held
