"""The advice's "after" anchored on the plans measured on the table, and the noise gate of its
verdict (`icelab/health/anchor.py`, `icelab/health/gain.py`): pure functions, no Spark."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from icelab.analysis.shape_catalogue import ratio_error
from icelab.core.provenance import REPO
from icelab.core.runs import find_runs
from icelab.health import anchor
from icelab.health.anchor import MEASURED, RATIO_ERROR, anchored, model_ratios, undecided
from icelab.health.gain import MIN_GAIN_SHARE, decided, slower, worth
from icelab.health.measured import median_range


def window(ms: float, low: float, high: float, name: str = "1d", plans: int = 5) -> dict:
    return {"window": name, "measured_ms": ms, "measured_range_ms": [low, high], "measured_plans": plans}


def ratios(ratio: float) -> dict:
    return {"ratio": ratio}


def health(windows: list[dict], fixed: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(windows=windows, fixed=fixed or {})


def test_the_after_is_the_measured_plan_times_the_models_ratio(monkeypatch):
    monkeypatch.setattr(anchor, "FORM", "ratio")
    # The calibration says 28 -> 25 ms (x0.89); the table measures 42 ms now: the after is 37.5 ms,
    # not the calibration's 25 ms.
    row = anchored(window(42.0, 40.0, 44.0), ratios(25 / 28))
    assert row["basis"] == MEASURED and row["now_ms"] == 42.0
    assert row["after_ms"] == pytest.approx(42 * 25 / 28, abs=0.05)
    assert row["gain_ms"] == pytest.approx(42 - 42 * 25 / 28, abs=0.05)
    # Its uncertainty: the plans' noise (half the interval) and the form's error on the after.
    assert row["noise_ms"] == 2.0
    assert row["error_ms"] == pytest.approx(42 * 25 / 28 * RATIO_ERROR + 2.0, abs=0.06)
    assert anchored({"window": "1d", "measured_ms": None}, ratios(0.5)) is None
    assert anchored(window(42.0, 40.0, 44.0), None) is None
    # Fewer plans than an interval of the median needs: the calibration stands in.
    assert anchored(window(42.0, 42.0, 42.0, plans=2), ratios(0.5)) is None


def test_split_keeps_the_measured_fixed_part_and_scales_the_rest(monkeypatch):
    monkeypatch.setattr(anchor, "FORM", "split")
    # The model: 28 ms now, 25 after, 22 of each fixed: its variable parts go 6 -> 3 (x0.5).
    found = model_ratios({"ms": 28.0, "fixed_ms": 22.0}, {"ms": 25.0, "fixed_ms": 22.0})
    assert found == pytest.approx({"ratio": 25 / 28, "variable_ratio": 0.5})
    fixed = window(30.0, 29.0, 31.0, name="none")
    row = anchored(window(42.0, 40.0, 44.0), found, fixed)
    # 30 ms measured with no manifest read stays; the 12 ms left halves.
    assert row["after_ms"] == pytest.approx(36.0) and row["after_split_ms"] == pytest.approx(36.0)
    assert row["after_ratio_ms"] == pytest.approx(42 * 25 / 28, abs=0.05)
    assert row["noise_ms"] == pytest.approx(2.0 + 1.0 * 0.5)
    # Without a measured fixed plan, the ratio form stands in.
    assert anchored(window(42.0, 40.0, 44.0), found)["after_ms"] == pytest.approx(37.5)


def test_a_saving_within_the_noise_of_the_plans_is_not_worth_a_rewrite():
    quiet = anchored(window(100.0, 98.0, 102.0), ratios(0.5))
    noisy = anchored(window(100.0, 40.0, 260.0), ratios(0.5))
    assert quiet["gain_ms"] == noisy["gain_ms"] == 50.0
    assert worth(quiet) and not worth(noisy)
    # A change below MIN_GAIN_SHARE of the planning is not worth it however quiet the plans.
    small = anchored(window(100.0, 99.9, 100.1), ratios(1 - MIN_GAIN_SHARE / 2))
    assert not worth(small) and not worth(small | {"error_ms": 0.0})


def test_a_window_measured_slower_after_beyond_its_noise_is_worse():
    reads = {"now_manifests": 2, "after_manifests": 2}
    assert slower(anchored(window(100.0, 98.0, 102.0), ratios(1.6)) | reads, modelled=True)
    assert not slower(anchored(window(100.0, 20.0, 300.0), ratios(1.6)) | reads, modelled=True)


def test_more_plans_are_asked_for_only_while_the_noise_alone_stands_in_the_way():
    # Saving 50 ms; the form's error 12.5 ms; the noise 60 ms: more plans could decide it.
    assert undecided(anchored(window(100.0, 40.0, 160.0), ratios(0.5)), MIN_GAIN_SHARE)
    assert not decided(health([window(100.0, 40.0, 160.0)]), {"1d": ratios(0.5)})
    # Quiet plans: decided.
    assert not undecided(anchored(window(100.0, 99.0, 101.0), ratios(0.5)), MIN_GAIN_SHARE)
    assert decided(health([window(100.0, 99.0, 101.0)]), {"1d": ratios(0.5)})
    # A change the form's error alone swallows: no number of plans decides it otherwise.
    assert not undecided(anchored(window(100.0, 40.0, 160.0), ratios(0.97)), MIN_GAIN_SHARE)


def test_the_interval_of_a_median_widens_with_fewer_plans():
    assert median_range([5.0, 1.0, 3.0]) == (1.0, 5.0)
    plans = [float(x) for x in range(1, 21)]  # 20 plans: the 6th and 15th order statistics
    assert median_range(plans) == (6.0, 15.0)


def test_the_error_the_doctor_uses_covers_the_catalogues_reference_run():
    runs = [r for r in find_runs(REPO / "results" / "reference") if r.experiment == "doctor_catalogue"]
    newest = max((r for r in runs if r.complete), key=lambda r: r.run_id)
    measured, count = ratio_error(newest)
    assert count >= 9 and measured <= RATIO_ERROR, (measured, count, newest.run_id)
