"""`icelab costmodel blind`: score the planning cost model's pre-registered blind check
(docs/costmodel-check.md) on the held-out runs stored so far.

    icelab costmodel blind                                  # results/reference/costmodel-check
    icelab costmodel blind --runs results/runs --json -     # other runs; JSON on stdout
    icelab costmodel blind --foreign results/runs/doctor_catalogue   # other foreign-table runs
    icelab costmodel blind --registration 1                 # the first registration's check

Each registration (`REGISTRATIONS`) is a page whose adding commit registers a model, its
calibration and its held-out data: the second registered the calibrated model's second form
(docs/costmodel-check-2.md) after the first (docs/costmodel-check.md) failed; the third the same
form calibrated on the S3 store at +20 ms (docs/costmodel-check-3.md); all stay scored.

It predicts each held-out cell with the registered calibration from the cell's own model inputs
(the run's model_inputs.csv: measure with `experiment.model_inputs=true`), and prints per cell the
measured value (the median of its run medians), the prediction with its 95% interval and the
error, then the criterion's three figures and the interval's coverage, with the commit that
registered them. Each set is scored on the runs of one commit measured after the registration
(`--commit`, else the commit most of its runs measured); the runs left out are named. Cells with
fewer than 3 runs or 2 sittings are listed, not scored, and the check cannot pass while any
remains. The same, apart, for tables other engines wrote: the windows doctor_catalogue runs (with
`experiment.measure_plans`) measured on each shape as written. First it prints the registered
condition as a whole (`outcome`): it passes only when every set the registration judges passes
(docs/advice-quality.md lists every registration's).

Exit status: 0 whatever the result (a result is reported, not enforced), 2 for bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from icelab.analysis import blind_check, calibration
from icelab.analysis.planning_cells import ICEBERG_DEFAULT_MODE
from icelab.analysis.planning_model import Fit
from icelab.analysis.shape_catalogue import CALIBRATION, catalogue
from icelab.core.errors import OneLineParser, UserError
from icelab.core.provenance import REPO, git
from icelab.core.results import write_json
from icelab.core.runs import Run, find_runs
from icelab.core.units import pct
from icelab.health.forecast import PlanningModel
from icelab.tools.costmodel_output import interval_text

CATALOGUE = "doctor_catalogue"
SHIPPED = Path("results") / calibration.SHIPPED


@dataclass(frozen=True)
class Registration:
    """One pre-registered blind check: the page whose adding commit registers it, the calibration
    it predicts with, and where its held-out runs are kept."""

    number: int
    page: str  # the commit that added it registered the check
    calibration: Path  # the registered calibration, byte for byte as that commit holds it
    registered_as: Path  # the calibration's path in the registering commit
    runs: Path  # its held-out runs (experiment `held_out`)
    held_out: str  # the experiment that measures its held-out states
    foreign: Path  # its doctor_catalogue runs (tables other engines wrote)
    # The states each held-out run measures first and is predicted by a fit on (the second
    # registration); empty: every run is predicted by the registered calibration itself.
    ladder: tuple[str, ...] = ()
    # The tables other engines wrote that the criterion judges (empty: every one measured), and
    # those reported apart, named before measuring as outside what the check claims.
    scored: tuple[str, ...] = ()
    reported: tuple[str, ...] = ()
    # Whether each foreign run's doctor must have predicted with the registered calibration
    # itself (its catalogue.json names the model): a run whose doctor used another is left out.
    doctor_calibrated: bool = False
    # Whether each foreign run's doctor must have predicted with a calibration made in the run's
    # own sitting by code that holds the registration (kept in its run directory,
    # doctor_catalogue.CALIBRATION); its cells are predicted by that calibration, each run its own.
    fresh_calibration: bool = False
    # The sets its registered condition judges (`outcome`): the three figures must hold on each:
    # "states", icelab's held-out states; "foreign", the tables other engines wrote.
    judged: tuple[str, ...] = ("states", "foreign")
    # Whether they must also hold for the doctor's own prediction of those tables (catalogue.json).
    doctor_judged: bool = False


REGISTRATIONS: dict[int, Registration] = {
    # The first: its calibration was replaced by the second's, and is kept, unchanged, beside it.
    1: Registration(
        1,
        "docs/costmodel-check.md",
        SHIPPED / "registered" / "1-local-local-0ms.json",
        SHIPPED / "local-local-0ms.json",
        Path("results") / "reference" / "costmodel-check",
        "costmodel_check",
        Path("results") / "reference",  # its doctor_catalogue runs: results/reference/doctor_catalogue
    ),
    2: Registration(
        2,
        "docs/costmodel-check-2.md",
        SHIPPED / "local-local-0ms.json",
        SHIPPED / "local-local-0ms.json",
        Path("results") / "reference" / "costmodel-check-2",
        "costmodel_check_2",
        Path("results") / "reference" / "costmodel-check-2",
        ("meta_36k", "meta_200k", "cal_narrow_200k", "cal_1m", "cal_small"),
    ),
    # The third: the second's form, calibrated on the S3 store at +20 ms; held-out states only
    # (its foreign runs' place holds none: the catalogue writes its tables on local disk). Its
    # calibration was replaced by one of the staged build's, and is kept, unchanged, beside it.
    3: Registration(
        3,
        "docs/costmodel-check-3.md",
        SHIPPED / "registered" / "3-local-object-20ms.json",
        SHIPPED / "local-object-20ms.json",
        Path("results") / "reference" / "costmodel-check-3",
        "costmodel_check_3",
        Path("results") / "reference" / "costmodel-check-3",
        ("meta_36k", "meta_200k", "cal_narrow_200k", "cal_small"),
        judged=("states",),
    ),
    # The fourth: the second's calibration unchanged, as the doctor finds it on local disk, on
    # tables other engines wrote at the sizes they make here (no held-out states: `held_out` "").
    4: Registration(
        4,
        "docs/costmodel-check-4.md",
        SHIPPED / "local-local-0ms.json",
        SHIPPED / "local-local-0ms.json",
        Path("results") / "reference" / "costmodel-check-4",
        "",
        Path("results") / "reference" / "costmodel-check-4",
        scored=(
            "fragmented_60",
            "pyiceberg_fragmented_80",
            "identity_and_time_40",
            "hourly_48",
            "merge_on_read_30",
        ),
        reported=("many_files",),
        doctor_calibrated=True,
        judged=("foreign",),
        doctor_judged=True,
    ),
    # The fifth: the doctor's prediction from a calibration made in each run's own sitting, with
    # the many-small-manifests regime fitted apart (docs/costmodel-check-5.md), on new tables
    # other engines wrote. Its calibration field names the shipped one only for the scorer's
    # plumbing: each run is predicted by its own (doctor_catalogue's calibration.json).
    5: Registration(
        5,
        "docs/costmodel-check-5.md",
        SHIPPED / "local-local-0ms.json",
        SHIPPED / "local-local-0ms.json",
        Path("results") / "reference" / "costmodel-check-5",
        "",
        Path("results") / "reference" / "costmodel-check-5",
        scored=(
            "fragmented_100",
            "pyiceberg_fragmented_50",
            "identity_and_time_25",
            "hourly_30",
            "merge_on_read_45",
            "spec_evolved_40",
        ),
        reported=("many_files_90",),
        fresh_calibration=True,
        judged=("foreign",),
        doctor_judged=True,
    ),
}
NEWEST = max(REGISTRATIONS)
# Why a held-out run of a ladder registration is left out, besides its commit.
OTHER_LADDER = "its ladder not the registered states"
# Why a foreign run is left out of a registration whose doctor must predict with its calibration.
OTHER_MODEL = "its doctor did not predict with the registered calibration"
# ... or with a calibration of its own sitting, made by code that holds the registration.
NOT_FRESH = "its doctor's calibration was not made in its sitting by the registered code"


ABOUT = "Score the cost model's pre-registered blind check on the held-out runs (exit 2: bad input)."


def parser() -> argparse.ArgumentParser:
    """The command's arguments."""
    p = OneLineParser(prog="icelab costmodel blind", description=ABOUT)
    p.add_argument(
        "--registration",
        type=int,
        choices=sorted(REGISTRATIONS),
        default=NEWEST,
        help="which registered check (default %(default)s, the newest)",
    )
    p.add_argument("--runs", type=Path, help="the held-out runs (default: the registration's)")
    p.add_argument(
        "--foreign", type=Path, help="where the doctor_catalogue runs are (default: the registration's)"
    )
    p.add_argument(
        "--calibration",
        type=Path,
        help="the calibration to predict with (default: the registered one)",
    )
    p.add_argument(
        "--commit",
        help="score the runs of this commit (default: the commit most runs of each set measured)",
    )
    p.add_argument(
        "--json", type=Path, help="also write the result as JSON to this file (-: print it instead)"
    )
    return p


def registration(path: Path, reg: Registration) -> dict[str, Any]:
    """The commit that registered the check `reg`, and whether `path` is the calibration it
    registered (byte for byte as committed then: the same git blob)."""
    # The full hash: git's abbreviation grows with a clone's object count, and pages print it.
    commit = git(REPO, "log", "--diff-filter=A", "--format=%H %cI", "--", reg.page) or None
    registered = commit and git(REPO, "rev-parse", f"{commit.split()[0]}:{reg.registered_as.as_posix()}")
    return {
        "number": reg.number,
        "page": reg.page,
        "held_out": reg.held_out,
        "fresh_calibration": reg.fresh_calibration,
        "commit": commit,
        "calibration": str(path),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "as_registered": bool(registered) and registered == git(REPO, "hash-object", str(path)),
    }


def short(commit: str) -> str:
    """A registering commit ("<hash> <ISO date>") as pages and the console show it: seven hex
    digits, a fixed width whatever the clone."""
    full, *rest = commit.split()
    return " ".join([full[:7], *rest])


def after_registration(commit: str | None, registered: str | None) -> bool:
    """Whether `commit` holds the registration (it is the registering commit or comes after it):
    runs of an earlier commit were measured before the check was registered, so not blind."""
    if not commit or not registered:
        return False
    return git(REPO, "merge-base", "--is-ancestor", registered.split()[0], commit) is not None


def _part(
    cells_of: dict[str, pd.DataFrame],
    runs: list[Run],
    model: Fit | None,
    commit: str | None,
    registered: str | None,
    per_size: bool = False,
) -> dict[str, Any]:
    """One set of held-out cells scored on the runs of one commit (`blind_check.of_one_commit`,
    measured after the registration): its runs, cells and verdict, as plain values; with
    `per_size`, the verdict per state size too (from the runs' states.csv). `model` predicts
    the cells; None: each run's cells carry their own prediction (a ladder registration)."""
    chosen, kept, left_out = blind_check.of_one_commit(runs, commit)
    part: dict[str, Any] = {
        "commit": chosen,
        "after_registration": after_registration(chosen, registered),
        "runs": [r.run_id for r in kept],
        "left_out": [{"run": r.run_id, "commit": blind_check.run_commit(r)} for r in left_out],
        "cells": [],
        "verdict": None,
        "by_size": [],
        "doctor": None,
    }
    if not kept:
        return part
    try:
        table = blind_check.combined(pd.concat([cells_of[r.run_id] for r in kept], ignore_index=True))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if not part["after_registration"]:
        table["complete"] = False  # measured before the check was registered: not blind, not scored
    scored = blind_check.predicted(table, model) if model is not None else blind_check.scored_each(table)
    doctor = None
    if "doctor_ms" in scored and scored["doctor_ms"].notna().all():
        doctor = blind_check.verdict(scored, "doctor_ms").as_json()
    sizes = blind_check.by_size(scored, blind_check.state_sizes(kept)) if per_size else []
    return part | {
        "cells": json.loads(scored.to_json(orient="records")),
        "verdict": blind_check.verdict(scored).as_json(),
        "by_size": [{"data_files": n, **v.as_json()} for n, v in sizes],
        "doctor": doctor,
    }


def score(
    runs_dir: Path,
    foreign_dir: Path,
    calibration_path: Path,
    commit: str | None = None,
    reg: Registration = REGISTRATIONS[NEWEST],
) -> dict[str, Any]:
    """The scored cells and the verdict of each set of the registered check `reg` (icelab's
    held-out states; tables other engines wrote), each on the runs of one commit (`commit`, else
    the one most of its runs measured), as plain values.

    Raises:
        UserError: for a calibration that cannot be read, or runs that cannot be scored.
    """
    try:
        registered = calibration.read(calibration_path)
        model = calibration.iceberg_fit(registered, ICEBERG_DEFAULT_MODE)
        states = [r for r in find_runs(runs_dir) if r.complete and r.experiment == reg.held_out]
        state_cells = {r.run_id: blind_check.run_cells(r) for r in states}
        foreign = [r for r in find_runs(foreign_dir) if r.complete and r.task == CATALOGUE]
        foreign_cells = {r.run_id: c for r in foreign if not (c := blind_check.catalogue_cells(r)).empty}
        other_ladder: list[Run] = []
        if reg.ladder:
            model = None
            state_cells, foreign_cells = _fitted_each(
                reg.ladder,
                set(registered.provenance.get("states") or ()),
                states,
                state_cells,
                foreign,
                foreign_cells,
            )
            other_ladder = [r for r in states if r.run_id not in state_cells]
            states = [r for r in states if r.run_id in state_cells]
    except (ValueError, OSError) as exc:
        raise UserError(str(exc)) from None
    found = registration(calibration_path, reg)
    other_model = [r for r in foreign if reg.doctor_calibrated and not _doctor_used(r, registered)]
    not_fresh: list[Run] = []
    if reg.fresh_calibration:
        model = None
        foreign_cells, not_fresh = _own_calibration(foreign, foreign_cells, found["commit"])
    foreign_cells = {k: v for k, v in foreign_cells.items() if k not in {r.run_id for r in other_model}}
    reported_cells = _shapes(foreign_cells, reg.reported)
    if reg.scored:
        foreign_cells = _shapes(foreign_cells, reg.scored)
    measured = [r for r in foreign if r.run_id in foreign_cells]
    held = _part(state_cells, states, model, commit, found["commit"], per_size=True)
    held["left_out"] += [
        {"run": r.run_id, "commit": blind_check.run_commit(r), "reason": OTHER_LADDER} for r in other_ladder
    ]
    out = {
        "registration": found,
        "states": held,
        "foreign": _part(foreign_cells, measured, model, commit, found["commit"]),
    }
    out["foreign"]["left_out"] += [
        {"run": r.run_id, "commit": blind_check.run_commit(r), "reason": reason}
        for reason, runs in ((OTHER_MODEL, other_model), (NOT_FRESH, not_fresh))
        for r in runs
    ]
    if reg.reported:
        shown = [r for r in foreign if r.run_id in reported_cells]
        out["reported"] = _part(reported_cells, shown, model, commit, found["commit"])
    out["outcome"] = outcome(out, reg)
    return out


def _held(verdict: dict[str, Any] | None) -> bool | None:
    """Whether a set's three figures hold (`Verdict.passed`); None when no cell of it is scored."""
    if not verdict or not verdict["cells"]:
        return None
    return bool(verdict["passed"])


def outcome(result: dict[str, Any], reg: Registration) -> dict[str, Any]:
    """The registered condition of `reg` on its scored `result` (`score`), as a whole.

    Each set it judges (`Registration.judged`, and the doctor's own prediction with
    `doctor_judged`) holds, fails or is not judged yet (None: no scored cell). The condition
    passes when every part holds and fails when any part fails; otherwise, or when scored with
    another calibration than the registered one, it is not judged yet (None). The sets reported
    apart are given, not judged.
    """
    parts = [{"set": name, "held": _held(result[name]["verdict"])} for name in reg.judged]
    if reg.doctor_judged:
        parts.append({"set": "doctor", "held": _held(result["foreign"].get("doctor"))})
    held = [p["held"] for p in parts]
    passed = False if False in held else None if None in held else True
    if not (reg.fresh_calibration or result["registration"]["as_registered"]):
        passed = None
    reported = _held(result["reported"]["verdict"]) if "reported" in result else None
    return {"passed": passed, "parts": parts, "reported": list(reg.reported), "reported_held": reported}


def _own_calibration(
    foreign: list[Run], cells_of: dict[str, pd.DataFrame], registered: str | None
) -> tuple[dict[str, pd.DataFrame], list[Run]]:
    """Each foreign run's cells predicted by the calibration its doctor used (kept in the run
    directory), when that calibration was made in the run's sitting by code that holds the
    registration and its fits are the ones the doctor used; the runs left out otherwise."""
    kept, left = {}, []
    for run in foreign:
        if run.run_id not in cells_of:
            continue
        try:
            own = calibration.read(run.path / CALIBRATION)
        except ValueError:
            left.append(run)
            continue
        git_of = own.provenance.get("git") or {}
        fresh = (
            own.provenance.get("sitting") == blind_check.sitting(run)
            and git_of.get("dirty") is False
            and after_registration(git_of.get("commit"), registered)
            and _doctor_used(run, own)
        )
        if not fresh:
            left.append(run)
            continue
        table = cells_of[run.run_id].reset_index(drop=True)
        found = PlanningModel.of_calibration(own).predict(table[blind_check.INPUTS])
        kept[run.run_id] = table.join(found[["predicted_ms", "lo_ms", "hi_ms", "extrapolated"]])
    return kept, left


def _shapes(cells_of: dict[str, pd.DataFrame], shapes: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Each run's cells of the tables named `shapes` (runs with none left out)."""
    kept = {rid: c[c["dataset"].isin(shapes)] for rid, c in cells_of.items()}
    return {rid: c for rid, c in kept.items() if not c.empty}


def _doctor_used(run: Run, registered: calibration.Calibration) -> bool:
    """Whether the run's doctor predicted with `registered` (the model its catalogue.json names
    has the registered fit's coefficients)."""
    used = (catalogue(run).get("model") or {}).get("coefficients")
    want = calibration.iceberg_fit(registered, ICEBERG_DEFAULT_MODE).summary()["coefficients"]
    if not used or len(used) != len(want):
        return False
    return all(
        u["term"] == w["term"] and abs(u["estimate"] - w["estimate"]) <= 1e-9 * max(1.0, abs(w["estimate"]))
        for u, w in zip(used, want, strict=True)
    )


def _fitted_each(
    ladder: Sequence[str],
    registered_states: set[str],
    states: list[Run],
    state_cells: dict[str, pd.DataFrame],
    foreign: list[Run],
    foreign_cells: dict[str, pd.DataFrame],
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """A ladder registration's cells, each predicted in its own run: a held-out run's by the fit
    on its own ladder cells, a catalogue run's by the fit on the ladder cells of its sitting's
    held-out runs. A held-out run whose ladder is not the registered calibration's states (by
    hash) is not scored; a catalogue run of a sitting with no held-out run has no prediction.

    Returns:
        The held-out runs' predicted held-out cells (of the runs kept), and the catalogue runs'
        predicted cells (those of a sitting with a fit).
    """
    held, of_sitting = {}, {}
    for run in states:
        table = state_cells[run.run_id]
        rung = table["dataset"].map(blind_check.state_name).isin(ladder)
        if set(table.loc[rung, "dataset"]) != registered_states:
            continue
        held[run.run_id] = blind_check.ladder_predicted(table[~rung], blind_check.ladder_fit(table, ladder))
        of_sitting.setdefault(blind_check.sitting(run), []).append(table[rung])
    fits = {
        s: blind_check.ladder_fit(pd.concat(parts, ignore_index=True), ladder)
        for s, parts in of_sitting.items()
    }
    paired = {
        r.run_id: blind_check.ladder_predicted(foreign_cells[r.run_id], fits[blind_check.sitting(r)])
        for r in foreign
        if r.run_id in foreign_cells and blind_check.sitting(r) in fits
    }
    return held, paired


MARK = {True: "holds", False: "fails", None: "not judged yet"}
# The sets a registered condition judges (`Registration.judged`, `outcome`), in words.
SETS = {
    "states": "icelab's held-out states",
    "foreign": "tables other engines wrote",
    "doctor": "the doctor's own prediction of those tables",
}
WHOLE = {True: "PASSES", False: "does not pass", None: "not judged yet"}


def outcome_text(found: dict[str, Any]) -> str:
    """One line: the registered condition as a whole (`outcome`), then each part."""
    parts = "; ".join(f"{SETS[p['set']]}: {MARK[p['held']]}" for p in found["parts"])
    return f"the registered condition as a whole: {WHOLE[found['passed']]} ({parts})"


def part_text(part: dict[str, Any], what: str, where: Path) -> list[str]:
    """One set's cells, then its three figures and coverage."""
    left = [
        f"{r['run']} ({(r['commit'] or 'changed work tree')[:7]})"
        for r in part["left_out"]
        if "reason" not in r
    ]
    left_text = [f"left out, not of commit {(part['commit'] or '?')[:7]}: {', '.join(left)}"] if left else []
    for reason in (OTHER_LADDER, OTHER_MODEL, NOT_FRESH):
        other = [r["run"] for r in part["left_out"] if r.get("reason") == reason]
        left_text += [f"left out, {reason}: {', '.join(other)}"] if other else []
    if not part["runs"]:
        return [f"{what}: no complete run under {where} measured a cell yet", *left_text]
    cells = pd.DataFrame(part["cells"])
    view = cells.assign(
        measured=cells["planning_ms"].map(lambda v: f"{v:,.1f}"),
        predicted=[interval_text(r) for r in cells.itertuples()],
        error=cells["rel_error"].map(lambda v: f"{v:+.1%}"),
        scored=cells["complete"].map({True: "yes", False: "no"}),
    )
    columns = ["dataset", "layout", "window", "runs", "sittings", "measured", "predicted", "error", "scored"]
    v = part["verdict"]
    # Nothing scored yet: no figure holds or fails.
    holds = v["holds"] if v["cells"] else dict.fromkeys(v["holds"])
    blind = (
        "after the registration"
        if part["after_registration"]
        else "NOT after the registration: measured before the check was registered, nothing scored"
    )
    if v["cells"] == 0:
        result = "not judged yet: no cell has its runs and sittings"
    else:
        result = "PASSES" if v["passed"] else "does not pass"
    return [
        f"{what}:",
        view[columns].to_string(index=False),
        f"commit {(part['commit'] or '?')[:7]} ({blind})",
        *left_text,
        f"runs: {len(part['runs'])} ({', '.join(part['runs'])}); cells scored: {v['cells']}, "
        f"not scored (fewer than {blind_check.MIN_RUNS} runs or {blind_check.MIN_SITTINGS} sittings): "
        f"{v['incomplete']}",
        f"1. within {pct(blind_check.WITHIN, 0)}: {pct(v['share_within'], 1)} of cells "
        f"(needs at least {pct(blind_check.SHARE_WITHIN, 0)}): {MARK[holds['share_within']]}",
        f"2. largest error: {pct(v['max_abs_error'], 1)} "
        f"(needs at most {pct(blind_check.NEVER_BEYOND, 0)}): {MARK[holds['none_beyond']]}",
        f"3. median signed error: {pct(v['median_signed_error'], 1)} (needs within "
        f"{pct(blind_check.BIAS, 0)}): {MARK[holds['no_bias']]}",
        f"coverage of the 95% prediction interval: {pct(v['coverage'], 1)} of the scored cells",
        f"result: {result}",
        *_size_text(sizes_shown(part)),
        *_doctor_text(part.get("doctor")),
    ]


def sizes_shown(part: dict[str, Any]) -> list[dict[str, Any]]:
    """The set's figures per state size, when it holds more than one size (one would repeat the
    set's own figures)."""
    sizes = part.get("by_size") or []
    return sizes if len(sizes) > 1 else []


def _size_text(sizes: list[dict[str, Any]]) -> list[str]:
    """The same figures per state size (`sizes_shown`)."""
    if not sizes:
        return []
    return ["per state size (the same figures on its scored cells):"] + [
        f"  {s['data_files']:,} files: {s['cells']} cells, within {pct(blind_check.WITHIN, 0)} "
        f"{pct(s['share_within'], 1)}, largest error {pct(s['max_abs_error'], 1)}, median signed error "
        f"{pct(s['median_signed_error'], 1)}, coverage {pct(s['coverage'], 1)}"
        for s in sizes
    ]


def _doctor_text(d: dict[str, Any] | None) -> list[str]:
    """The doctor's own predicted "now" (made with the model it used when it read each table)
    against the same measured cells, by the same three figures."""
    if not d or not d["cells"]:
        return []
    return [
        f"the doctor's own predicted now (its model at the time), same {d['cells']} cells: "
        f"within {pct(blind_check.WITHIN, 0)} {pct(d['share_within'], 1)} "
        f"({MARK[d['holds']['share_within']]}), "
        f"largest error {pct(d['max_abs_error'], 1)} ({MARK[d['holds']['none_beyond']]}), "
        f"median signed error {pct(d['median_signed_error'], 1)} ({MARK[d['holds']['no_bias']]}): "
        + ("PASSES" if d["passed"] else "does not pass")
    ]


def text(result: dict[str, Any], runs_dir: Path, foreign_dir: Path) -> str:
    """The console view."""
    reg = result["registration"]
    by = short(reg["commit"]) if reg["commit"] else "an unknown commit (no git)"
    head = f"blind check {reg['number']} registered by {by} ({reg['page']}); "
    if reg.get("fresh_calibration"):
        head += "each run predicted with the calibration its doctor used, made in its sitting"
    else:
        head += f"predicted with {reg['calibration']}" + (
            "" if reg["as_registered"] else " -- NOT the registered calibration: not the registered check"
        )
    states = part_text(result["states"], "held-out states (metadata_scale runs)", runs_dir)
    reported = result.get("reported")
    return "\n".join(
        [
            head,
            outcome_text(result["outcome"]),
            *([*states, ""] if result["states"]["runs"] or reg["held_out"] else []),
            *part_text(result["foreign"], "tables other engines wrote (doctor_catalogue runs)", foreign_dir),
            *(["", *part_text(reported, REPORTED, foreign_dir)] if reported is not None else []),
        ]
    )


REPORTED = "reported apart, not judged by the criterion (registered so): tables other engines wrote"


def main(argv: Sequence[str] | None = None) -> int:
    """Score and print; 0, or 2 after one line on stderr for bad input."""
    try:
        args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        reg = REGISTRATIONS[args.registration]
        args.runs = args.runs or reg.runs
        args.foreign = args.foreign or reg.foreign
        args.calibration = args.calibration or reg.calibration
        if not args.calibration.is_file():
            raise UserError(f"{args.calibration}: no such calibration file")
        result = score(args.runs, args.foreign, args.calibration, args.commit, reg)
    except UserError as exc:
        print(f"icelab: error: {exc}", file=sys.stderr)
        return 2
    if args.json is not None and str(args.json) == "-":
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(text(result, args.runs, args.foreign))
    if args.json is not None:
        write_json(args.json, result)
        print(f"wrote {args.json}")
    return 0
