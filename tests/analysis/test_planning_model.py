"""The planning cost model: planted coefficients recovered, larger tables predicted, the layout
arithmetic exact (icelab.analysis.planning_*, manifest_layouts; no Spark)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from icelab.analysis import planning_cells, planning_model
from icelab.analysis.planning_cells import cells
from icelab.analysis.planning_model import fit, holdout

# planning_ms = const + a x first feature + b x second (+ c x third), per (format, mode).
PLANTED = {
    ("iceberg", "local"): {
        "const": 150.0,
        "manifests_read": 0.9,
        "busiest_thread_entries": 0.012,
        "entries_matched": 0.004,
    },
    ("iceberg", "distributed"): {
        "const": 900.0,
        "manifests_read": 0.3,
        "busiest_thread_entries": 0.006,
        "entries_matched": 0.009,
    },
    ("parquet", "listing_serial"): {"const": 25.0, "partitions_listed": 7.4, "files_listed": 0.05},
    ("parquet", "listing_parallel"): {"const": 400.0, "partitions_listed": 2.0, "files_listed": 0.03},
}
SIZES = {"meta_200k-aaaa": 200_000, "meta_1m-bbbb": 1_000_000, "meta_10m-cccc": 10_000_000}
DAYS = 180
WINDOWS = {"1h": 1.0, "1d": 24.0, "7d": 168.0, "30d": 720.0, "90d": 2160.0, "180d": 4320.0}
TARGETS = {"as_ingested": None, "rewrite_1mb": 2**20, "rewrite_8mb": 8 * 2**20}
ENTRY = 673
# Four planning threads: a window of two or three manifests waits for its largest one, a wider
# window for a quarter of its entries, so the synthetic runs hold both regimes.
THREADS = 4


def read(files: int, target: int | None, days: int) -> tuple[int, int, int, int]:
    """(manifests in the table, manifests read, entries read, entries of the largest manifest
    read) of a `days`-day window, by hand: as ingested one manifest per 2,640 entries, each
    spanning every day; rewritten, the entries sorted by day, target // ENTRY to a manifest."""
    if target is None:
        return files // 2640, files // 2640, files, 2640
    per = target // ENTRY
    total = math.ceil(files / per)
    if days >= DAYS:
        return total, total, files, per
    manifests = min(total, math.ceil(days * files / DAYS / per) + 1)
    return total, manifests, min(files, manifests * per), per


def planted(fmt: str, mode: str, features: dict[str, float]) -> float:
    c = PLANTED[(fmt, mode)]
    return c["const"] + sum(c[k] * features[k] for k in c if k != "const")


def rows_of(cell: dict, truth: float, rng: np.random.Generator, noise: float) -> list[dict]:
    """Two warm-ups (4x), three measured repetitions (truth plus normal noise of sd `noise` ms),
    two failed rows (10x): a fit that keeps warm-ups or failures is far off."""
    out = []
    for rep, (warmup, status, factor) in enumerate(
        [(True, "ok", 4.0)] * 2 + [(False, "ok", None)] * 3 + [(False, "error", 10.0)] * 2, start=-2
    ):
        value = truth * factor if factor else truth + rng.normal(0.0, noise)
        out.append({**cell, "repetition": rep, "warmup": warmup, "status": status, "planning_ms": value})
    return out


def synthetic(
    sizes: dict[str, int] = SIZES, seed: int = 7, noise: float = 2.0, setup: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(measurements, states.csv, windows.csv) of a metadata_scale-like run with PLANTED costs.

    Without `setup`, the rows record no mode (as the reference runs): Iceberg planned locally,
    Parquet listed serially up to 32 partitions and in parallel above.
    """
    rng = np.random.default_rng(seed)
    rows, states, windows = [], [], []
    for dataset, files in sizes.items():
        per_day = files / DAYS
        for profile, target in TARGETS.items():
            total, *_ = read(files, target, DAYS)
            states.append(
                {
                    "dataset": dataset,
                    "format": "iceberg",
                    "profile": profile,
                    "data_files": files,
                    "days": DAYS,
                    "manifests": total,
                    "manifest_bytes": files * ENTRY,
                    "entry_bytes": ENTRY,
                }
            )
            for window, hours in WINDOWS.items():
                days = max(1, math.ceil(hours / 24))
                _, manifests, entries, largest = read(files, target, days)
                windows.append(
                    {
                        "dataset": dataset,
                        "profile": profile,
                        "window": window,
                        "manifests_read": manifests,
                        # Entries differ a little in size (their bounds do): bytes follow entries closely.
                        "manifest_bytes_read": round(entries * ENTRY * (1 + 0.01 * math.sin(len(windows)))),
                        "entries_read": entries,
                        "largest_manifest_entries": largest,
                    }
                )
                in_window = min(entries, round(days * per_day))
                for mode in ("local", "distributed") if setup else ("local",):
                    cell = {
                        "dataset": dataset,
                        "format": "iceberg",
                        "profile": profile,
                        "setup": mode if setup else None,
                        "query_id": "count_window",
                        "window": window,
                        "window_hours": hours,
                        "manifests_scanned": manifests,
                        "files_scanned": in_window,
                        "files_skipped": entries - in_window,
                        "partitions_scanned": None,
                    }
                    busiest = max(entries / THREADS, largest)
                    truth = planted(
                        "iceberg",
                        mode,
                        {
                            "manifests_read": manifests,
                            "busiest_thread_entries": busiest,
                            "entries_matched": in_window,
                        },
                    )
                    rows += rows_of(cell, truth, rng, noise)
        states.append(
            {
                "dataset": dataset,
                "format": "parquet",
                "profile": "none",
                "data_files": files,
                "days": DAYS,
                "manifests": None,
                "manifest_bytes": None,
                "entry_bytes": None,
            }
        )
        for window, hours in WINDOWS.items():
            days = max(1, math.ceil(hours / 24))
            listed = round(days * per_day)
            modes = (
                ("listing_serial", "listing_parallel")
                if setup
                else ("listing_serial" if days <= 32 else "listing_parallel",)
            )
            for mode in modes:
                cell = {
                    "dataset": dataset,
                    "format": "parquet",
                    "profile": "none",
                    "setup": mode if setup else None,
                    "query_id": "count_window",
                    "window": window,
                    "window_hours": hours,
                    "manifests_scanned": None,
                    "files_scanned": listed,
                    "files_skipped": None,
                    "partitions_scanned": days,
                }
                truth = planted("parquet", mode, {"partitions_listed": days, "files_listed": listed})
                rows += rows_of(cell, truth, rng, noise)
    frame = pd.DataFrame(rows)
    frame["variant"] = np.where(frame["format"] == "parquet", "parquet", "iceberg/" + frame["profile"])
    frame["planner_threads"] = THREADS  # what planning_runs.measurements adds from env.json
    return frame, pd.DataFrame(states), pd.DataFrame(windows)


@pytest.fixture(scope="module")
def run_data() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return synthetic()


def test_the_fit_recovers_the_planted_coefficients_within_their_intervals(run_data):
    frame, states, windows = run_data
    for fmt in ("iceberg", "parquet"):
        fits = fit(frame, fmt, states=states, windows=windows)
        assert set(fits) == {mode for f, mode in PLANTED if f == fmt}
        for mode, model in fits.items():
            assert model.n == len(SIZES) * (len(TARGETS) if fmt == "iceberg" else 1) * len(WINDOWS)
            # Twelve intervals at once: at 95% one in two seeds leaves a planted value outside one of
            # them by chance (their coverage is right); at 99% a miss is a fault of the fit.
            table = model.coefficients(level=0.99).set_index("term")
            for term, value in PLANTED[(fmt, mode)].items():
                scale = 1e3 if term in ("busiest_thread_entries", "entries_matched", "files_listed") else 1.0
                low, high = table.loc[term, ["ci_low", "ci_high"]] / scale
                assert low <= value <= high, (fmt, mode, term, low, value, high)
                if term != "const":  # the per-unit costs within 5% (the fixed part is small beside them)
                    assert model.coefficient(term) == pytest.approx(value, rel=0.05), (fmt, mode, term)
            assert model.r2 > 0.99


def test_the_units_are_per_manifest_per_thousand_entries_and_fixed(run_data):
    frame, states, windows = run_data
    model = fit(frame, "iceberg", states=states, windows=windows)["local"]
    table = model.coefficients().set_index("term")
    assert table["unit"].to_dict() == {
        "const": "fixed ms",
        "manifests_read": "ms per manifest",
        "busiest_thread_entries": "ms per 1,000 entries on the busiest thread",
        "entries_matched": "ms per 1,000 entries matched",
    }
    assert table.loc["busiest_thread_entries", "estimate"] == pytest.approx(12.0, rel=0.05)  # 0.012 ms each
    diagnostics = model.diagnostics()
    assert set(diagnostics["vif"]) == {"manifests_read", "busiest_thread_entries", "entries_matched"}
    assert diagnostics["condition_number"] > 1


def test_bytes_beside_entries_show_their_collinearity(run_data):
    frame, states, windows = run_data
    plain = fit(frame, "iceberg", states=states, windows=windows)["local"].diagnostics()
    features = ("manifests_read", "entries_read", "entries_matched", "manifest_bytes_read")
    both = fit(frame, "iceberg", features, states, windows)["local"].diagnostics()
    # Entries of nearly one size: bytes are almost entries times a constant, and the fit says so.
    assert max(plain["vif"].values()) < 10 and plain["condition_number"] < 30
    assert both["vif"]["entries_read"] > 100 and both["vif"]["manifest_bytes_read"] > 100
    assert both["condition_number"] > 30
    # Exactly one size: no fit at all, and a note saying why.
    exact = windows.assign(manifest_bytes_read=windows["entries_read"] * ENTRY)
    notes: list[str] = []
    with pytest.raises(ValueError, match="no iceberg cells to fit"):
        fit(frame, "iceberg", features, states, exact, notes=notes)
    assert "iceberg/local not fitted: a feature never varies or is an exact mix of the others" in notes


def test_rows_without_a_mode_plan_as_the_defaults():
    frame = pd.DataFrame(
        {
            "format": ["iceberg", "parquet", "parquet", "parquet", "iceberg"],
            "setup": [None, None, None, None, "distributed"],
            "partitions_scanned": [None, 1, 32, 33, None],
        }
    )
    # Spark lists serially up to the threshold of paths (32), as a job above it.
    assert planning_cells.modes(frame).tolist() == [
        "local",
        "listing_serial",
        "listing_serial",
        "listing_parallel",
        "distributed",
    ]


def test_features_missing_from_a_row_come_from_windows_csv(run_data):
    frame, states, windows = run_data
    # As if distributed planning reported no manifest counts: the manifest list's stand in (the
    # entries matched, files_scanned, only the scan can tell).
    blind = frame.copy()
    gone = blind["setup"] == "distributed"
    blind.loc[gone, ["manifests_scanned", "files_skipped"]] = None
    table = cells(blind, states, windows)
    distributed = table[table["mode"] == "distributed"].merge(
        windows.rename(columns={"profile": "layout"}),
        on=["dataset", "layout", "window"],
        suffixes=("", "_csv"),
    )
    assert len(distributed) == len(SIZES) * len(TARGETS) * len(WINDOWS)
    assert (distributed["manifests_read"] == distributed["manifests_read_csv"]).all()
    assert (distributed["entries_read"] == distributed["entries_read_csv"]).all()
    model = fit(blind, "iceberg", states=states, windows=windows)["distributed"]
    assert model.coefficient("manifests_read") == pytest.approx(0.3, rel=0.05)


def test_the_busiest_thread_reads_a_share_of_the_entries_or_the_largest_manifest(run_data):
    frame, states, windows = run_data
    table = cells(frame, states, windows).query("format == 'iceberg'")
    assert (
        table["busiest_thread_entries"]
        == np.maximum(table["entries_read"] / 4, table["largest_manifest_entries"])
    ).all()
    # Both regimes are in the data: a narrow rewritten window waits for one manifest, a wide one
    # (and every as-ingested one) for a quarter of its entries.
    largest_bound = table["largest_manifest_entries"] > table["entries_read"] / 4
    assert largest_bound.any() and (~largest_bound).any()
    # Without windows.csv's largest manifest, the layout's cut: 8 MB / (bytes / entries) entries,
    # or the window's entries when fewer; as ingested, the mean manifest.
    blind = cells(frame, states, windows.drop(columns="largest_manifest_entries")).query(
        "format == 'iceberg'"
    )
    keyed = blind.set_index(["dataset", "layout", "window", "mode"])
    ten = keyed.loc[("meta_10m-cccc", "rewrite_8mb", "1d", "local")]
    per_entry = ten["manifest_bytes_read"] / ten["entries_read"]
    assert ten["largest_manifest_entries"] == math.floor(8 * 2**20 / per_entry)
    ingested = keyed.loc[("meta_10m-cccc", "as_ingested", "1h", "local")]
    assert ingested["largest_manifest_entries"] == 10_000_000 / (10_000_000 // 2640)
    assert planning_cells.largest_read(
        pd.DataFrame(
            {
                "layout": ["rewrite_1mb"],
                "entries_read": [500.0],
                "manifests_read": [1.0],
                "manifest_bytes_read": [np.nan],
            }
        )
    ).tolist() == [500.0]
    with pytest.raises(ValueError, match="planner_threads"):
        cells(frame.drop(columns="planner_threads"), states, windows)


def test_limit_fits_only_the_smaller_datasets(run_data):
    frame, states, windows = run_data
    model = fit(frame, "iceberg", states=states, windows=windows, limit=1_000_000)["local"]
    assert set(model.cells["dataset"]) == {"meta_200k-aaaa", "meta_1m-bbbb"}
    with pytest.raises(ValueError, match="no iceberg cells"):
        fit(frame, "iceberg", states=states, windows=windows, limit=1_000)


def test_holdout_predicts_the_planted_larger_table_and_the_reference_runs(run_data):
    frame, states, windows = run_data
    reference, _, _ = synthetic({"medium-4149ea9e8a87": 35_913}, seed=3, setup=False)
    check = holdout(frame, states, windows, limit=1_000_000, reference=[reference])
    held = check.held_out
    assert set(held["dataset"]) == {"meta_10m-cccc"}
    assert len(held) == (2 * len(TARGETS) + 2) * len(
        WINDOWS
    )  # two Iceberg modes per layout, two listing modes
    truth = [
        planted(r.format, r.mode, {k: getattr(r, k) for k in PLANTED[(r.format, r.mode)] if k != "const"})
        for r in held.itertuples()
    ]
    assert np.allclose(held["predicted_ms"], truth, rtol=0.05)
    assert (held["rel_error"].abs() < 0.05).all()
    assert ((held["lo_ms"] < held["predicted_ms"]) & (held["predicted_ms"] < held["hi_ms"])).all()
    ref = check.reference
    # Rows without a mode: Iceberg's default (local), Parquet listing serially up to 32 partitions.
    assert set(ref.loc[ref["format"] == "iceberg", "mode"]) == {"local"}
    parquet = ref[ref["format"] == "parquet"].set_index("window")["mode"].to_dict()
    assert parquet == {
        w: "listing_serial" if w in ("1h", "1d", "7d", "30d") else "listing_parallel" for w in WINDOWS
    }
    assert (ref["data_files"] == 35_913).all()
    assert (ref["rel_error"].abs() < 0.05).all()
    assert np.allclose(ref["rel_error"], (ref["predicted_ms"] - ref["planning_ms"]) / ref["planning_ms"])
    # A reference measured 25% slower than the model: its error is reported as it is.
    slower = reference.assign(planning_ms=reference["planning_ms"] * 1.25)
    off = holdout(frame, states, windows, limit=1_000_000, reference=[slower]).reference
    assert np.allclose(off["rel_error"], 1 / 1.25 - 1, atol=0.05)
    summary = check.summaries()["reference"]
    assert set(summary["layout"]) == {*TARGETS, "parquet"}
    assert (summary["max_abs_error"] >= summary["median_abs_error"]).all()


def test_the_same_cell_in_separate_runs_shows_how_far_apart_they_are():
    """Two runs of one dataset, the second 30% slower in one layout: that layout's spread is 30%
    in every cell, the others' only the noise; a dataset measured once has no spread."""
    medium = {"medium-45e49c86fc89": 35_913}
    first, _, _ = synthetic(medium, seed=3, noise=0.0, setup=False)
    slower = first["profile"] == "rewrite_8mb"
    second = first.assign(planning_ms=np.where(slower, first["planning_ms"] * 1.3, first["planning_ms"]))
    other, _, _ = synthetic({"medium-4149ea9e8a87": 35_913}, seed=3, noise=0.0, setup=False)
    spread = planning_model.repeat_spread({"a": first, "b": second, "c": other})
    assert set(spread["dataset"]) == set(medium) and (spread["runs"] == 2).all()
    eight = spread["layout"] == "rewrite_8mb"
    assert np.allclose(spread.loc[eight, "spread"], 0.3) and np.allclose(spread.loc[~eight, "spread"], 0.0)
    assert np.allclose(spread["slowest_ms"] / spread["fastest_ms"] - 1, spread["spread"])
    summary = planning_model.spread_summary(spread).set_index("layout")
    assert summary.loc["rewrite_8mb", "max_spread"] == pytest.approx(0.3)
    assert summary.loc["as_ingested", "max_spread"] == pytest.approx(0.0)
    assert planning_model.repeat_spread({"a": first}).empty
    # A rewrite cut elsewhere: the same window reads other manifests, which is other work.
    recut = second.assign(
        manifests_scanned=np.where(slower, second["manifests_scanned"] + 1, second["manifests_scanned"])
    )
    assert set(planning_model.repeat_spread({"a": first, "b": recut})["layout"]) == set(TARGETS) - {
        "rewrite_8mb"
    } | {"parquet"}


def test_a_cost_per_kb_is_told_apart_from_a_cost_per_entry_on_wide_and_narrow_entries():
    """The calibrated form (CALIBRATED_FEATURES): on cells of wide (700 B) and narrow (110 B)
    entries, the fit recovers a planted cost per entry and per KB on the busiest thread, whose
    bytes `with_busiest` takes from the manifests read. The first form, without the KB term,
    fitted on the wide cells alone, over-predicts the narrow ones by far."""
    rng = np.random.default_rng(5)
    planted_costs = {"const": 30.0, "manifests_read": 2.0, "busiest_thread_entries": 0.006}
    planted_costs |= {"busiest_thread_kb": 0.03, "entries_matched": 0.003}
    rows = []
    for entry_bytes in (700.0, 110.0):
        for entries, manifests, largest in [(600, 20, 30), (36_000, 200, 180), (200_000, 379, 528)]:
            for share in (0.005, 0.1, 0.5, 1.0):
                for rewritten in (False, True):
                    read = max(int(entries * share), 1) if rewritten else entries
                    biggest = min(read, 11_000) if rewritten else largest
                    rows.append(
                        {
                            "manifests_read": max(1, read // biggest) if rewritten else manifests,
                            "entries_read": read,
                            "largest_manifest_entries": biggest,
                            "entries_matched": max(int(entries * share), 1),
                            "manifest_bytes_read": read * entry_bytes,
                            "entry_bytes": entry_bytes,
                        }
                    )
    table = planning_cells.with_busiest(pd.DataFrame(rows), 2)
    truth = planted_costs["const"] + sum(table[k] * v for k, v in planted_costs.items() if k != "const")
    table["planning_ms"] = truth * (1 + rng.normal(0.0, 0.01, len(table)))
    model = planning_model.fit_cells(table, "iceberg", "local", planning_cells.CALIBRATED_FEATURES)
    for term, value in planted_costs.items():
        assert model.coefficient(term) == pytest.approx(value, rel=0.1), term
    wide, narrow = table[table["entry_bytes"] == 700.0], table[table["entry_bytes"] == 110.0]
    first = planning_model.fit_cells(
        wide.reset_index(drop=True), "iceberg", "local", planning_cells.FEATURES["iceberg"]
    )
    over = (first.predict(narrow)["predicted_ms"] - narrow["planning_ms"]) / narrow["planning_ms"]
    assert over.max() > 0.5
    calibrated = model.predict(narrow)["predicted_ms"]
    assert ((calibrated - narrow["planning_ms"]).abs() / narrow["planning_ms"]).max() < 0.05
