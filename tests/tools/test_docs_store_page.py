"""docs/object-store.md's blocks compute their figures from the stored runs, local and on the store.

No Spark: each test copies the local manifest_8mb reference run and the object store's reference
runs into a temporary results directory, edits what they stored, and checks the generated text
follows the edit, row by row.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from icelab.analysis import store_runs as selection
from icelab.tools.docs import store_page
from tests.tools.test_docs_planning import REFERENCE, rows_of

STORE = REFERENCE / selection.OBJECT_STORE


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A results directory with local disk's manifest_8mb reference run and the object store's
    manifest_8mb runs."""
    local = sorted((REFERENCE / "manifest_8mb").iterdir())[-1]
    _copy(local, tmp_path / "reference" / "manifest_8mb" / local.name)
    for run in sorted((STORE / "manifest_8mb").iterdir()):
        _copy(run, tmp_path / "reference" / selection.OBJECT_STORE / "manifest_8mb" / run.name)
    return tmp_path


def store_runs(results: Path) -> list[Path]:
    return sorted((results / "reference" / selection.OBJECT_STORE / "manifest_8mb").iterdir())


def test_the_planning_table_has_one_row_per_place_and_variant_with_the_measured_medians(
    results: Path,
) -> None:
    block = store_page.planning_table(results)
    header = rows_of(block)["data on"]
    lines = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line][1:]
    places = [line.split("|")[1].strip() for line in lines]
    assert places[:3] == ["local disk"] * 3
    assert {p for p in places[3:]} == {
        selection.place(r) for r in selection.planning_runs(results / "reference")[1:]
    }
    # The object store at 0 ms: every cell is the median of its measured rounds.
    run = store_runs(results)[0]
    m = pd.read_parquet(run / "measurements.parquet")
    ok = m[~m["warmup"] & (m["status"] == "ok") & (m["query_id"] == "count_window")]
    rgw = [line for line in lines if line.split("|")[1].strip() == "RGW, 0 ms"]
    parquet = next(line for line in rgw if line.split("|")[2].strip() == "parquet")
    cells = [c.strip() for c in parquet.strip("|").split("|")]
    for window in ["1h", "1d", "180d"]:
        med = ok[(ok.variant == "parquet") & (ok.window == window)]["planning_ms"].median()
        assert cells[header.index(window) + 1].split(" ")[0] == f"{med:,.0f}", window


def test_a_tenfold_planning_time_planted_in_the_store_run_changes_its_rows_only(results: Path) -> None:
    before = store_page.planning_table(results)
    claims_before = rows_of(store_page.claims_table(results))
    run = store_runs(results)[0]
    m = pd.read_parquet(run / "measurements.parquet")
    m.loc[m["variant"] == "iceberg/as_ingested", "planning_ms"] *= 10
    m.to_parquet(run / "measurements.parquet")
    after = store_page.planning_table(results)
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert len(changed) == 1
    assert changed[0][1].startswith("| RGW, 0 ms | iceberg as ingested |")
    # ... and the claims follow: as ingested over 8 MB is ten times what it was on that store,
    # and nothing else moves.
    claims = rows_of(store_page.claims_table(results))
    header = claims["data on"]
    for column in ("as ingested / 8 MB, 1d", "as ingested / 8 MB, 180d"):
        i = header.index(column)
        was = float(claims_before["RGW, 0 ms"][i].rstrip("x"))
        assert float(claims["RGW, 0 ms"][i].rstrip("x")) == pytest.approx(10 * was, rel=0.01)
    assert {k: v for k, v in claims.items() if k != "RGW, 0 ms"} == {
        k: v for k, v in claims_before.items() if k != "RGW, 0 ms"
    }


def test_the_request_counts_are_the_medians_of_the_s3a_counters(results: Path) -> None:
    run = store_runs(results)[0]
    m = pd.read_parquet(run / "measurements.parquet")
    rows = m[~m["warmup"] & (m["query_id"] == "count_window") & (m["variant"] == "parquet")]
    lists = rows[rows.window == "180d"]["s3_list_requests"].median()
    block = store_page.requests_table(results)
    # Both stores sent the same requests: one row names them both.
    line = next(x for x in block.splitlines() if x.startswith("| RGW, 0 ms, RGW, +20 ms (proxy) | parquet |"))
    assert line.split("|")[4].strip().split(" / ")[0] == f"{lists:,.0f}"
    m.loc[(m["variant"] == "parquet") & (m["window"] == "180d"), "s3_list_requests"] += 1000
    m.to_parquet(run / "measurements.parquet")
    line = next(
        x for x in store_page.requests_table(results).splitlines() if x.startswith("| RGW, 0 ms | parquet |")
    )
    assert line.split("|")[4].strip().split(" / ")[0] == f"{lists + 1000:,.0f}"


def test_a_local_reference_run_that_was_on_the_store_is_refused(results: Path) -> None:
    local = next((results / "reference" / "manifest_8mb").iterdir())
    env = json.loads((local / "env.json").read_text())
    env["storage"] = {"kind": "object", "latency_ms": 0}
    (local / "env.json").write_text(json.dumps(env))
    with pytest.raises(LookupError, match="no complete local-disk manifest_8mb run of medium-"):
        store_page.planning_table(results)


def test_runs_of_another_dataset_are_not_set_side_by_side(results: Path) -> None:
    run = store_runs(results)[0]
    meta = json.loads((run / "run.json").read_text())
    meta["dataset"] = "small-000000000000"
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="different dataset"):
        store_page.planning_table(results)


def test_without_a_store_run_the_blocks_are_not_written(tmp_path: Path) -> None:
    local = sorted((REFERENCE / "manifest_8mb").iterdir())[-1]
    _copy(local, tmp_path / "reference" / "manifest_8mb" / local.name)
    with pytest.raises(LookupError, match="no complete manifest_8mb run"):
        store_page.planning_table(tmp_path)


def test_the_reading_follows_the_requests_and_the_medians(results: Path) -> None:
    text = store_page.reading(results)
    assert "Parquet plans with one LIST per day partition in the window" in text
    assert "30d on local disk" in text  # where the 8 MB table starts planning faster than Parquet
    for run in store_runs(results):
        m = pd.read_parquet(run / "measurements.parquet")
        m.loc[(m["variant"] == "parquet") & (m["window"] == "180d"), "s3_list_requests"] = 7
        # Parquet planning 100x slower at 1h on the stores: the 8 MB table is faster there too.
        m.loc[(m["variant"] == "parquet") & (m["window"] == "1h"), "planning_ms"] *= 100
        m.to_parquet(run / "measurements.parquet")
    text = store_page.reading(results)
    assert "one LIST per day partition" not in text
    assert "7 LIST, 0 HEAD, 0 GET at 180d" in text
    assert "30d on local disk" in text
    assert "1h on RGW at 0 ms" not in text  # 1d still plans faster on Parquet: no crossover at 1h
    assert "30d on RGW at 0 ms" in text


@pytest.fixture
def with_canonical(tmp_path: Path) -> Path:
    """A results directory with local disk's canonical reference run and the store's."""
    local = sorted((REFERENCE / "canonical").iterdir())[-1]
    _copy(local, tmp_path / "reference" / "canonical" / local.name)
    store = sorted((STORE / "canonical").iterdir())[-1]
    _copy(store, tmp_path / "reference" / selection.OBJECT_STORE / "canonical" / store.name)
    return tmp_path


def test_the_canonical_table_sets_the_stores_geometric_means_beside_local_disks(with_canonical: Path) -> None:
    block = store_page.canonical_table(with_canonical).split("\n\n")[0]  # the geometric means
    lines = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line][1:]
    keys = [tuple(c.strip() for c in line.strip("|").split("|")[:2]) for line in lines]
    assert keys == [
        ("local disk", "`initial`"),
        ("local disk", "`optimized`"),
        ("RGW, 0 ms", "`initial`"),
        ("RGW, 0 ms", "`optimized`"),
    ]
    store = next((with_canonical / "reference" / selection.OBJECT_STORE / "canonical").iterdir())
    m = pd.read_parquet(store / "measurements.parquet")
    m.loc[m["variant"] == "parquet", "execution_ms"] *= 2  # Parquet executes twice as long on the store
    m.to_parquet(store / "measurements.parquet")
    after = store_page.canonical_table(with_canonical).split("\n\n")[0]
    before_rows = [line.split("|") for line in block.splitlines()[2:]]
    after_rows = [line.split("|") for line in after.splitlines()[2:]]
    for was, now in zip(before_rows, after_rows, strict=True):
        if now[1].strip() == "local disk":
            assert now == was
        else:
            planning_, execution, total = (float(c.strip().split("x")[0]) for c in now[3:6])
            was_planning, was_execution, was_total = (float(c.strip().split("x")[0]) for c in was[3:6])
            assert planning_ == was_planning  # planning untouched
            assert execution == pytest.approx(was_execution / 2, abs=0.01)  # Iceberg / Parquet halves
            assert total < was_total  # and the total falls with it


def test_the_per_file_table_divides_the_executions_requests_by_their_files(with_canonical: Path) -> None:
    store = next((with_canonical / "reference" / selection.OBJECT_STORE / "canonical").iterdir())
    m = pd.read_parquet(store / "measurements.parquet")
    done = m[m["executed"] & ~m["warmup"] & (m["status"] == "ok") & (m["variant"] == "parquet")]
    want = done["s3_head_requests"].sum() / done["files_scanned"].sum()
    rows = rows_of(store_page.canonical_table(with_canonical).split("\n\n")[-1])
    header = rows["variant"]
    assert rows["`parquet`"][header.index("HEAD per file")] == f"{want:,.2f}"
    m.loc[m["variant"] == "parquet", "s3_head_requests"] *= 3
    m.to_parquet(store / "measurements.parquet")
    rows = rows_of(store_page.canonical_table(with_canonical).split("\n\n")[-1])
    assert rows["`parquet`"][header.index("HEAD per file")] == f"{3 * want:,.2f}"


def test_the_canonical_table_names_each_places_protocol(with_canonical: Path) -> None:
    text = store_page.canonical_table(with_canonical)
    local = next((with_canonical / "reference" / "canonical").iterdir())
    meta = json.loads((local / "run.json").read_text())
    rounds, executions = meta["protocol"]["repetitions"], meta["protocol"]["executions"]
    assert f"on local disk: {rounds} rounds, {executions} executed" in text
    assert "Not the same protocol" in text
    # The store's single round has no interval: its cells carry no brackets.
    rows = [
        [c.strip() for c in line.strip("|").split("|")] for line in text.split("\n\n")[0].splitlines()[2:]
    ]
    assert all("[" not in cell for r in rows if r[0] != "local disk" for cell in r[2:])
    assert all("[" in cell for r in rows if r[0] == "local disk" for cell in r[2:])


def test_the_added_latency_is_wall_time_per_request_not_a_requests_latency(results: Path) -> None:
    text = store_page.reading(results)
    assert "ms of added wall time per request" in text
    assert "ms each" not in text
    assert "not the latency of a request: every round trip took 20 ms longer" in text
    assert "so its requests were in flight together" in text  # 11.5 ms per request < 20 ms


def test_planning_mds_note_on_the_store_quotes_the_claims_tables_ratios(results: Path) -> None:
    rows = rows_of(store_page.claims_table(results))
    header = rows.pop("data on")
    note = store_page.planning_note(results)
    for place, cells in rows.items():
        narrow, wide = (cells[header.index(f"8 MB / Parquet, {w}")] for w in ("1d", "180d"))
        assert f"{narrow} at 1d and {wide} at 180d" in note, place
    assert "The added latency widens Iceberg's narrow-window gap" in note
    assert "Parquet's line moves up" not in note
