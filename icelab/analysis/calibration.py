"""A calibration: the planning cost model fitted on one machine, engine and storage, kept as a
JSON file with where and how it was measured, so that a prediction uses the fit of the engine and
storage it is asked about and says which, or says that none matches.

A calibration is made from a run of states measured on that engine and storage (`icelab costmodel
calibrate`). It keeps the fitted cells themselves beside the coefficients and their covariance:
loading one refits its cells (weighted least squares is deterministic) and refuses a file whose
stored coefficients its cells do not give, so its predictions, intervals and fitted range are
those of a fit on the run. Files are named <engine>-<storage>-<latency>ms.json (`Where.key`):
results/calibrations/ for those made on this checkout, results/reference/calibrations/ for the
committed ones; a match is read from a file's content, not its name.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from icelab.analysis.manifest_layouts import measured_entry_bytes
from icelab.analysis.planning_cells import (
    CALIBRATED_FEATURES,
    CELL_KEYS,
    ICEBERG,
    cells,
    regime_mode,
    small_manifests,
)
from icelab.analysis.planning_model import Fit, fit_all, fit_cells
from icelab.analysis.planning_runs import load
from icelab.core.provenance import git_state
from icelab.core.results import write_json
from icelab.core.runs import Run

VERSION = 1
MADE = Path("calibrations")  # under a results directory: made here, not committed
SHIPPED = Path("reference") / "calibrations"  # under a results directory: committed
# What a calibration keeps of each fitted cell: its key, its measured median and every input the
# fit, its interval, its fitted range and the range check of a predicted table read.
CELL_COLUMNS = [
    *CELL_KEYS,
    "n",
    "planning_ms",
    "window_hours",
    "data_files",
    "manifests_read",
    "entries_read",
    "entries_matched",
    "largest_manifest_entries",
    "busiest_thread_entries",
    "busiest_thread_kb",
    "manifest_bytes_read",
    "partitions_listed",
    "files_listed",
    "planner_threads",
]
TEXT_COLUMNS = set(CELL_KEYS)
STORAGE_FACTS = ("kind", "server", "data_dir", "latency_ms", "latency_mechanism", "faults")
# The refit must give the stored coefficients to this relative tolerance (float noise only).
SAME = 1e-6


@dataclass(frozen=True)
class Where:
    """An engine and a storage: what a calibration was measured on, or what a prediction is for.
    The latency is the round trip added to the store (0 on local disk, where none can be added)."""

    engine: str  # engine.name: local, standalone, cluster
    storage: str  # storage.kind: local, object
    latency_ms: float = 0.0

    @classmethod
    def of(cls, engine: str, storage: str, latency_ms: float | None = 0.0) -> Where:
        """Checked and normalised: local storage has no added latency."""
        latency = float(latency_ms or 0.0)
        if not math.isfinite(latency) or latency < 0:
            raise ValueError(f"bad latency {latency_ms!r}: use a number of milliseconds from 0")
        return cls(str(engine), str(storage), 0.0 if storage == "local" else latency)

    @classmethod
    def of_env(cls, env: Mapping[str, Any]) -> Where:
        """Where a run ran, from its env.json (engine.name, storage.kind and latency_ms).

        Raises:
            ValueError: when env.json does not say the engine or the storage.
        """
        engine, storage = env.get("engine") or {}, env.get("storage") or {}
        if not engine.get("name") or not storage.get("kind"):
            raise ValueError("env.json does not say the engine (engine.name) and storage (storage.kind)")
        return cls.of(engine["name"], storage["kind"], storage.get("latency_ms"))

    def __str__(self) -> str:
        return f"{self.engine}/{self.storage} {self.latency_ms:g} ms"

    @property
    def key(self) -> str:
        """The file name's stem: `local-object-20ms`."""
        return f"{self.engine}-{self.storage}-{self.latency_ms:g}ms"


@dataclass(frozen=True)
class Calibration:
    """A stored calibration, its fits rebuilt from its cells."""

    path: Path
    where: Where
    fits: dict[tuple[str, str], Fit]
    threads: int  # the planning threads it was measured with (the driver's cores)
    entry_bytes: float
    entry_bytes_from: str
    provenance: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.provenance.get("run_id"))

    @property
    def experiment(self) -> str:
        return str(self.provenance.get("experiment"))

    @property
    def commit(self) -> str:
        git = self.provenance.get("git") or {}
        commit = (git.get("commit") or "?")[:7]
        return commit + (" (dirty)" if git.get("dirty") else "")

    def describe(self) -> str:
        """`calibration local/local 0 ms, run 2026...-abc123, commit 1234567 (path)`."""
        return f"calibration {self.where}, run {self.run_id}, commit {self.commit} ({self.path})"


class Mismatch(ValueError):
    """A calibration named for an engine or storage other than the one asked for."""


def check_match(calibration: Calibration, asked: Where) -> None:
    """Refuse a calibration measured on another engine or storage than `asked`.

    Raises:
        Mismatch: naming both.
    """
    if calibration.where != asked:
        raise Mismatch(
            f"calibration {calibration.path} was measured on {calibration.where}, not on {asked} "
            "as asked: calibrate that engine and storage, or ask for the calibration's"
        )


def record(run: Run, created: dt.datetime | None = None, wall_s: float | None = None) -> dict[str, Any]:
    """The calibration of a run of states (a metadata_scale-like run): every fit it allows, its
    cells, coefficients, covariance and fitted ranges, and the run's provenance.

    Args:
        wall_s: how long making it took (building the states, measuring, fitting), when known.

    Raises:
        ValueError: when the run cannot be fitted, or its env.json does not say where it ran.
    """
    env, meta = run.env(), run.meta()
    where = Where.of_env(env)
    frame, states, windows = load(run)
    notes: list[str] = []
    fits = fit_all(frame, {ICEBERG: CALIBRATED_FEATURES}, states=states, windows=windows, notes=notes)
    fits |= small_manifest_fits(fits, notes)
    entry_bytes, entry_from = measured_entry_bytes(states)
    table = cells(frame, states, windows)
    return {
        "version": VERSION,
        "engine": where.engine,
        "storage": where.storage,
        "latency_ms": where.latency_ms,
        "threads": int(frame["planner_threads"].iloc[0]),
        "entry_bytes": entry_bytes,
        "entry_bytes_from": entry_from,
        "provenance": {
            "run_id": run.run_id,
            "experiment": run.experiment,
            "run_path": str(run.path),
            "run_started_utc": meta.get("started_utc"),
            "run_finished_utc": meta.get("finished_utc"),
            "created_utc": (created or dt.datetime.now(dt.timezone.utc)).isoformat(timespec="seconds"),
            "calibrate_s": wall_s,
            "machine": env.get("machine"),
            "engine": env.get("engine"),
            # Not the endpoints: a loopback port of one sitting says nothing of the storage.
            "storage": {k: v for k, v in (env.get("storage") or {}).items() if k in STORAGE_FACTS},
            "versions": env.get("versions"),
            "git": env.get("git"),
            # The code that fitted it: the run's own (above) when calibrated in one go; another
            # when a stored run is fitted again (`icelab costmodel calibrate --from`).
            "fitted_by": git_state(),
            "template": meta.get("dataset"),
            # The blind check's sitting label of the calibrating run (experiment.sitting), if any.
            "sitting": (run.config().get("experiment") or {}).get("sitting"),
            "states": sorted(map(str, table["dataset"].unique())),
            "query": meta.get("query"),
        },
        "notes": notes,
        "fits": [_fit_record(f) for f in fits.values()],
    }


def small_manifest_fits(fits: Mapping[tuple[str, str], Fit], notes: list[str]) -> dict[tuple[str, str], Fit]:
    """For each Iceberg mode fitted, the same form fitted on its cells of the many-small-manifests
    regime alone (`planning_cells.small_manifests`), keyed (format, `regime_mode(mode)`); a mode
    with too few such cells gets none (said in `notes`)."""
    out: dict[tuple[str, str], Fit] = {}
    for (fmt, mode), model in fits.items():
        if fmt != ICEBERG:
            continue
        part = model.cells[small_manifests(model.cells)].reset_index(drop=True)
        exog = np.column_stack([np.ones(len(part)), part[list(model.features)].to_numpy(float)])
        if len(part) < len(model.features) + 2 or np.linalg.matrix_rank(exog) < exog.shape[1]:
            notes.append(f"{fmt}/{regime_mode(mode)} not fitted: {len(part)} cells of many small manifests")
            continue
        out[(fmt, regime_mode(mode))] = fit_cells(part, fmt, regime_mode(mode), model.features)
    return out


def _fit_record(model: Fit) -> dict[str, Any]:
    result = model.result
    terms = ["const", *model.features]
    kept = model.cells[[c for c in CELL_COLUMNS if c in model.cells.columns]]
    ranges = {
        c: [float(kept[c].min()), float(kept[c].max())]
        for c in (*model.features, "data_files", "largest_manifest_entries")
        if kept[c].notna().any()
    }
    return {
        "format": model.format,
        "mode": model.mode,
        "features": list(model.features),
        "coefficients": {t: float(result.params[t]) for t in terms},
        "covariance": np.asarray(result.cov_params().loc[terms, terms], dtype=float).tolist(),
        "scale": float(result.scale),
        "df_resid": float(result.df_resid),
        "n": model.n,
        "r2": model.r2,
        "fitted_range": ranges,
        "cells": json.loads(kept.to_json(orient="records", double_precision=15)),
    }


def read(path: Path) -> Calibration:
    """A calibration file, its fits rebuilt from its cells.

    Raises:
        ValueError: for a file that is not a calibration, of another version, or whose cells do
            not give its stored coefficients.
    """
    try:
        data = json.loads(path.read_text())
        where = Where.of(data["engine"], data["storage"], data["latency_ms"])
        if data.get("version") != VERSION:
            raise ValueError(f"version {data.get('version')!r}, not {VERSION}")
        fits = {(f["format"], f["mode"]): _refit(f) for f in data["fits"]}
        return Calibration(
            path,
            where,
            fits,
            int(data["threads"]),
            float(data["entry_bytes"]),
            str(data["entry_bytes_from"]),
            dict(data["provenance"]),
        )
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a calibration icelab can read ({exc})") from None


def _refit(stored: Mapping[str, Any]) -> Fit:
    part = pd.DataFrame(stored["cells"])
    for column in part.columns:
        if column not in TEXT_COLUMNS:
            part[column] = pd.to_numeric(part[column], errors="coerce").astype(float)
    model = fit_cells(part, stored["format"], stored["mode"], stored["features"])
    want = pd.Series(stored["coefficients"], dtype=float)
    got = model.result.params[want.index].astype(float)
    if not np.allclose(got, want, rtol=SAME, atol=0.0):
        raise ValueError(f"its {stored['format']}/{stored['mode']} cells do not give its coefficients")
    return model


def write(data: Mapping[str, Any], directory: Path) -> Path:
    """Store a calibration (`record`) as `directory`/<Where.key>.json, replacing an older one of
    the same engine and storage."""
    where = Where.of(data["engine"], data["storage"], data["latency_ms"])
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{where.key}.json"
    write_json(path, data)
    return path


def places(bases: Iterable[Path]) -> list[Path]:
    """Where calibrations are looked for, in order: under each results directory of `bases`,
    those made there (calibrations/), then the committed ones (reference/calibrations/)."""
    return [base / sub for base in bases for sub in (MADE, SHIPPED)]


def matching(asked: Where, bases: Sequence[Path]) -> Calibration | None:
    """The calibration for `asked`: in the first place (`places`) holding one, the newest made;
    None when none matches. Files that cannot be read are passed over."""
    for place in places(bases):
        found = []
        for path in sorted(place.glob("*.json")) if place.is_dir() else []:
            try:
                header = json.loads(path.read_text())
                if Where.of(header["engine"], header["storage"], header["latency_ms"]) != asked:
                    continue
                found.append(read(path))
            except (OSError, KeyError, TypeError, ValueError):
                continue
        if found:
            return max(found, key=lambda c: str(c.provenance.get("created_utc")))
    return None


def searched(bases: Sequence[Path]) -> str:
    """The places `matching` looks in, for a message."""
    return ", ".join(map(str, places(bases)))


def small_manifest_fit(calibration: Calibration, mode: str) -> Fit | None:
    """The calibration's Iceberg fit of `mode` on many small manifests alone; None for a
    calibration made before that regime was fitted (it predicts every window with `iceberg_fit`)."""
    return calibration.fits.get((ICEBERG, regime_mode(mode)))


def iceberg_fit(calibration: Calibration, mode: str) -> Fit:
    """The calibration's Iceberg fit of `mode`.

    Raises:
        KeyError: naming the modes it has, when it has no such fit.
    """
    if (ICEBERG, mode) not in calibration.fits:
        have = ", ".join(m for f, m in calibration.fits if f == ICEBERG) or "none"
        raise KeyError(f"no Iceberg fit for mode '{mode}' in {calibration.path} (fitted: {have})")
    return calibration.fits[(ICEBERG, mode)]


# A calibration older than this many hours is flagged where it predicts (the doctor's advice,
# `icelab costmodel`'s notes). The fourth blind check's calibration, made hours before its runs,
# under-predicted every judged cell; the fifth's, made in the same sitting, passed
# (docs/costmodel-check-4.md, docs/costmodel-check-5.md).
STALE_AFTER_H = 6.0


def age_hours(created_utc: str | None, now: dt.datetime | None = None) -> float | None:
    """Hours from `created_utc` (a calibration's provenance) to `now`; None when it is not given."""
    if not created_utc:
        return None
    at = dt.datetime.fromisoformat(str(created_utc).replace("Z", "+00:00"))
    return ((now or dt.datetime.now(dt.UTC)) - at).total_seconds() / 3600


def stale_note(created_utc: str | None, now: dt.datetime | None = None) -> str | None:
    """A note for predictions made with a calibration older than STALE_AFTER_H; else None."""
    age = age_hours(created_utc, now)
    if age is None or age <= STALE_AFTER_H:
        return None
    return (
        f"the calibration predicting planning here was made {age:,.1f} h ago; on this machine one "
        "made hours before its use under-predicted every judged cell of the fourth blind check, and "
        "ones made in the same sitting passed the fifth (docs/costmodel-check-4.md, "
        "docs/costmodel-check-5.md): run `icelab costmodel calibrate` (same engine and storage) and "
        "ask again"
    )
