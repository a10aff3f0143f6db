"""The doctor's console report: each table state as read, its advice, the planning measured on
it, and after `--apply` what changed (`render`, from a `diagnosis.Diagnosis`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icelab.bench.manifest_stats import stat_rows
from icelab.core.units import plural, size
from icelab.health.advice import Advice
from icelab.health.anchor import MEASURED
from icelab.health.check import NULL_TIME, OUTSIDE, Health
from icelab.health.deletes import kinds_text
from icelab.health.diagnosis import BEFORE_REWRITE, SHOWN_PROPERTIES, Diagnosis, Visit
from icelab.health.measured import ROUND_CAP, STEADY, TIME_CAP, WARMUPS
from icelab.health.orphans import orphans_text
from icelab.health.reader import READER
from icelab.health.target import binary_text


def _mb(n: float | None) -> str:
    """Bytes in decimal units (kB, MB, GB), as the maintenance docs give them."""
    if n is None:
        return "?"
    unit = "GB" if n >= 1e8 else "MB" if n >= 1e5 else "kB"
    return size(n, unit)


STAT_LABELS = {
    "partition": "per partition",
    "exact": "manifests holding it",
    "bounds": "manifests planning opens",
    "manifest": "per data manifest",
    "span": "span (share of partitions)",
    "manifest_kb": "size KiB",
    "manifest_entries": "entries",
}


def render_visit(v: Visit) -> list[str]:
    """The console text of one state."""
    h, meta = v.health, v.meta
    data = h.data_manifests
    f, d, snaps, md = h.files, h.deletes, h.snapshots, h.metadata
    specs = "; ".join(f"spec {k}: {s.describe()}" for k, s in meta.specs.items())
    lines = [
        f"{h.state}: {v.source.describe()}",
        f"  format v{meta.format_version}, {specs} (default {meta.default_spec_id}), "
        f"snapshot {meta.current_snapshot_id}",
        f"  manifests      {len(data)} data ({_mb(data.length.sum())}), {d['delete_manifests']} delete "
        f"({_mb(h.manifests.length[h.manifests.content != 0].sum())})",
        f"  data files     {f['data_files']:,} ({_mb(f['data_bytes'])}, {plural(f['records'], 'row')}) in "
        f"{plural(len(h.live_partitions), 'partition')}; small (< {_mb(f['small_file_bytes'])}): "
        f"{f['small_files']:,} ({f['small_share']:.0%})",
        f"  delete files   {d['delete_files']:,} ({kinds_text(d)}; {d['delete_records']:,} deleted rows)",
        f"  orphaned       {orphans_text(h.orphans)}",
        f"  snapshots      {snaps['count']} ({snaps['older_than_retention']} older than {snaps['retain']}, "
        f"{snaps['expirable']} expirable keeping the newest {snaps['retain_last']})",
        f"  metadata       metadata.json {_mb(md['metadata_json_bytes'])}, {md['metadata_files_in_log']} in "
        f"its log; manifest list {_mb(md['manifest_list_bytes'])}",
        *_unwindowed(h),
        *stat_rows(h.stats, STAT_LABELS, indent=4, width=30),
        f"  -> {v.advice.verdict.upper()}" + (" + EXPIRY ADVISED" if h.expiry_advised else ""),
        f"  why: {v.advice.why}",
        *[f"  rule: {r}" for r in h.reasons],
    ]
    shown = {k: meta.properties[k] for k in SHOWN_PROPERTIES if k in meta.properties}
    if shown:
        lines.insert(2, "  properties     " + ", ".join(f"{k}={val}" for k, val in shown.items()))
    return lines


def _unwindowed(h: Health) -> list[str]:
    """The partitions no time window opens, with what they cost: one line per null partition, one
    for all those outside every window; none when there is none."""
    nulls = [u for u in h.unwindowed if u["why"] == NULL_TIME]
    outside = sorted((u for u in h.unwindowed if u["why"] == OUTSIDE), key=lambda u: u["partition"])
    lines = [
        f"  no window      {u['partition']}: {plural(u['files'], 'data file')} in "
        f"{plural(u['exact'], 'manifest')}, {plural(u['bounds'], 'manifest')} planned for it (a null time "
        "value: no time window opens it; left out of the statistics below)"
        for u in nulls
    ]
    if outside:
        names = outside[0]["partition"] + (f" .. {outside[-1]['partition']}" if len(outside) > 1 else "")
        windows = ", ".join(w["window"] for w in h.windows)
        files = sum(u["files"] for u in outside)
        most = max(u["bounds"] for u in outside)
        lines.append(
            f"  no window      {plural(len(outside), 'partition')} outside every window ({windows}), "
            f"{names}: {plural(files, 'data file')}, up to {plural(most, 'manifest')} planned for one "
            "(left out of the statistics below)"
        )
    return lines


def _estimate(ms: float, range_ms: Sequence[float], extrapolated: bool) -> str:
    """`~12 ms [8-17]`: a predicted planning and its 95% prediction interval, `*` beyond the
    fitted range."""
    low, high = range_ms
    return f"~{ms:.0f} ms [{low:.0f}-{high:.0f}]" + ("*" if extrapolated else "")


def _now_text(p: dict[str, Any]) -> str:
    """` 42 ms measured [38-47]`, or where nothing was measured the calibration's prediction,
    marked so; empty without either."""
    if p.get("now_measured_ms") is not None:
        low, high = p.get("now_measured_range_ms") or (p["now_measured_ms"],) * 2
        return f" {p['now_measured_ms']:.0f} ms measured [{low:.0f}-{high:.0f}]"
    if p.get("now_predicted_ms") is None:
        return ""
    estimate = _estimate(p["now_predicted_ms"], p["now_predicted_range_ms"], p["now_predicted_extrapolated"])
    return f" {estimate} (calibration, not measured)"


def _after_text(p: dict[str, Any]) -> str:
    """` ~35 ms [29-44] (x0.83 of the measured)`: planning predicted after a rewrite; empty without."""
    if p.get("after_predicted_ms") is None:
        return ""
    low, high = p["after_range_ms"]
    text = f" predicted ~{p['after_predicted_ms']:.0f} ms [{low:.0f}-{high:.0f}]"
    if p.get("after_basis") == MEASURED:
        return text + f" (x{p['ratio_predicted']:.2f} of the measured, the model's ratio)"
    return text + " (calibration, not measured)"


def render_advice(a: Advice, applied: str = "", plan: Advice | None = None) -> list[str]:
    """The console text of one state's advice; with `plan`, the statements are the plan's (those
    that ran on a copy, naming it)."""
    shown = plan or a
    lines = ["advice:"]
    if a.target_bytes:
        cluster = (
            f", clustered by {' then '.join(a.cluster_by)}" if a.cluster_by else ", clustered by partition"
        )
        sizes = ", ".join(_mb(b) for b in (a.manifest_sizes_after or [])[:8])
        more = ", ..." if len(a.manifest_sizes_after or []) > 8 else ""
        lines += [
            f"  manifest target {binary_text(a.target_bytes)}{cluster}: {a.target_reason}",
            f"  the rewrite simulated: {plural(a.manifests_after or 0, 'manifest')} ({sizes}{more}), "
            f"{plural(a.units_per_manifest or 0, a.unit)} each on average",
        ]
    if a.predictions:
        lines.append(f"  planning per window ({a.model}):")
        for p in a.predictions:
            now = f"{plural(p['now_manifests'], 'manifest')} ({p['now_mb']:.2f} MB){_now_text(p)}"
            if p.get("now_delete_manifests"):
                now += f" + {plural(p['now_delete_manifests'], 'delete manifest')}"
            text = f"    {p['window']:>5} ({plural(p['units'], a.unit)}): now {now}"
            if "after_manifests" in p:
                when = "after" if a.actions else "a rewrite would give"
                text += f"; {when} {p['after_manifests']} ({p['after_mb']:.2f} MB){_after_text(p)}"
            lines.append(text)
    if shown.statements:
        how = applied or "dry run, nothing changed; --apply runs those marked [apply]"
        lines.append(f"  statements ({how}):")
        for st in shown.statements:
            mark = "[apply]" if st.applies else "[review]"
            lines += [
                f"    {mark} -- {st.why}",
                f"    {st.text};" if st.language == "sql" else f"    {st.text}",
            ]
    if shown.catalog_settings and shown.statements:
        lines.append(
            "  catalog (to run them elsewhere): "
            + " ".join(f"--conf {k}={v}" for k, v in shown.catalog_settings.items())
        )
    lines += [f"  note: {n}" for n in a.notes]
    if not a.actions:
        lines.append("  nothing to do: healthy")
    return lines


def _predicted(w: dict[str, Any]) -> str:
    """`predicted ~10 ms [8-17]` from a window's forecast."""
    p = w.get("predicted")
    if not p:
        return "predicted: none (no cost model fitted)"
    return "predicted " + _estimate(p["ms"], p["range_ms"], p["extrapolated"])


def render_measured(
    v: Visit,
    plans: int,
    when: str = "now",
    budget_s: float | None = None,
    warmups: int = WARMUPS,
    rounds: dict[str, Any] | None = None,
) -> list[str]:
    """Per window: planning measured on the table `when` (median of `plans` plans, or of the last
    two blocks of the `rounds` run until steady), beside the cost model's prediction; one line
    saying so when nothing was measured."""
    windows = v.health.windows
    if not windows:
        return []
    if plans <= 0:
        return [f"  planning {when}: not measured (--measure-plans 0)"]
    budget = "" if budget_s is None else f", within {budget_s:g} s"
    if rounds and rounds.get("stopped") in (STEADY, TIME_CAP, ROUND_CAP):
        which = (
            f"the median of the last {plural(2 * plans, 'plan')} of {plural(rounds['rounds'], 'round')} "
            f"(stopped: {rounds['stopped']})"
        )
    else:
        which = f"the median of at least {plural(plans, 'plan')}"
    lines = [
        f"  planning {when}, measured on the table at snapshot {v.meta.current_snapshot_id} (count query "
        f"per window, planned, not run; {which} after "
        f"{plural(warmups, 'warm-up round')}, windows interleaved, and its 95% interval{budget}):"
    ]
    for w in windows:
        if w.get("measured_ms") is None:
            measured = f"not measured: {w.get('measure_error') or w.get('measure_skipped') or 'no plan'}"
        else:
            scanned = w["manifests_scanned"]
            # A plan Spark answered without a scan (an empty filter) has no Iceberg metrics.
            manifests = "no Iceberg scan" if scanned is None else plural(scanned, "manifest")
            if w.get("measured_cold"):
                manifests += "; one cold plan: more would pass the measuring budget"
            low, high = w["measured_range_ms"]
            measured = (
                f"{w['measured_ms']:.0f} ms measured [{low:.0f}-{high:.0f}] "
                f"({plural(w['measured_plans'], 'plan')}; {manifests})"
            )
        if w.get("measured_ms") is None:
            measured += f", {_predicted(w)} (calibration)"
        lines.append(f"    {w['window']:>5}: {measured}")
    fixed = v.health.fixed
    if fixed.get("measured_ms") is not None:
        low, high = fixed["measured_range_ms"]
        read = plural(fixed["manifests_scanned"] or 0, "manifest")
        lines.append(
            f"    {'none':>5}: {fixed['measured_ms']:.0f} ms measured [{low:.0f}-{high:.0f}] (a window past "
            f"the newest data, {read} read: the plan's fixed part)"
        )
    return lines


def render_before_after(diagnosis: Diagnosis) -> list[str]:
    """Per window: manifests planned before, as simulated and after; planning before and after,
    measured in the same interleaved rounds, beside the "after" predicted before applying."""
    where = f" (the copy {diagnosis.copy})" if diagnosis.copy else ""
    lines = [
        f"before -> after{where}: manifests planned per window; planning measured before -> after "
        "(interleaved rounds), and the after predicted before applying"
    ]
    for r in diagnosis.before_after():
        simulated = f", simulated {r['predicted_manifests']}" if r["predicted_manifests"] is not None else ""
        text = f"  {r['window']:>5}: {r['before_manifests']} -> {r['after_manifests']}{simulated}"
        if r["before_measured_ms"] is not None and r["after_measured_ms"] is not None:
            text += (
                f"; {r['before_measured_ms']:.0f} -> {r['after_measured_ms']:.0f} ms measured "
                f"(x{r['ratio_measured']:.2f})"
            )
        if r["after_predicted_ms"] is not None:
            ratio = f", x{r['ratio_predicted']:.2f}" if r.get("ratio_predicted") is not None else ""
            text += f", predicted ~{r['after_predicted_ms']:.0f} ms{ratio}"
        lines.append(text + ("  WORSE" if r["worse"] else ""))
    if diagnosis.worse:
        lines.append(
            "  WORSE: what --apply ran left some window planning more manifests or slower than before"
        )
    return lines


def _range(ms: float, range_ms: Sequence[float] | None) -> str:
    low, high = range_ms or (ms, ms)
    return f"{ms:.0f} [{low:.0f}-{high:.0f}]"


TIME_PARTS = {
    "read": "reading the table",
    "scratch_register": "the scratch copy",
    "scratch_rewrite": "its rewrite",
    "scratch_read": "reading it",
    "planning_rounds": "planning rounds",
    "scratch_remove": "removing it",
}


def render_scratch(diagnosis: Diagnosis) -> list[str]:
    """The rewrite measured on the scratch copy: per window, manifests and planning now -> after,
    measured in the same rounds; how the rounds stopped; where the time went."""
    info = diagnosis.scratch_info
    if not info:
        return []
    where = f"kept at {info['directory']}" if info["kept"] else "removed"
    stopped = f"{plural(info.get('rounds', 0), 'round')}, stopped: {info.get('stopped') or 'not planned'}"
    lines = [
        f"measured on a scratch copy ({info['table']}: the table's metadata only, in icelab's own catalog "
        f"under the results directory; {where}): the rewrite the advice means, then the table and the copy "
        f"planned in the same rounds until steady ({stopped}; ms, median [95% interval])"
    ]
    # With --copy, the before -> after block below has these rows, beside the predictions.
    for r in [] if diagnosis.copy else diagnosis.measured_after():
        text = f"  {r['window']:>5}: {r['before_manifests']} -> {r['after_manifests']} manifests"
        if r["before_measured_ms"] is not None and r["after_measured_ms"] is not None:
            now, after = r["before_measured_ms"], r["after_measured_ms"]
            text += (
                f"; {_range(now, r['before_measured_range_ms'])} -> "
                f"{_range(after, r['after_measured_range_ms'])} ms ({(after - now) / now:+.0%})"
            )
        lines.append(text)
    fixed = [v.health.fixed for v in (diagnosis.first, diagnosis.scratch) if v is not None]
    if all(f.get("measured_ms") is not None for f in fixed) and len(fixed) == 2:
        lines.append(
            f"   none: {_range(fixed[0]['measured_ms'], fixed[0]['measured_range_ms'])} -> "
            f"{_range(fixed[1]['measured_ms'], fixed[1]['measured_range_ms'])} ms (a window past the newest "
            "data: the fixed part)"
        )
    if info.get("note"):
        lines.append(f"  note: {info['note']}")
    spent = info.get("seconds", {})
    lines.append("  time: " + ", ".join(f"{TIME_PARTS.get(k, k)} {v:.1f} s" for k, v in spent.items()))
    return lines


def render(diagnosis: Diagnosis) -> str:
    """The whole console report."""
    first = diagnosis.first
    steps = ", ".join(f"{k} {v:.2f} s" for k, v in first.meta.timings.items())
    lines = [
        f"icelab doctor: {first.source.describe()}",
        f"read in {first.meta.read_seconds:.2f} s + {diagnosis.load_seconds:.2f} s to load the table "
        f"({READER}, entries summed by {first.meta.entries_reader}: {steps})",
    ]
    if first.meta.entries_fallback:
        lines.append(f"  (not in the driver's JVM: {first.meta.entries_fallback})")
    if first.meta.manifests_read and first.meta.manifests_read["iceberg_reader"]:
        read = first.meta.manifests_read
        lines.append(
            f"  ({plural(read['from_bytes'], 'manifest')} read from their Avro bytes, "
            f"{read['iceberg_reader']:,} by Iceberg's reader: delete manifests, or a codec the first "
            "cannot read)"
        )
    ran = ""
    if diagnosis.applied:
        ran = f"applied to the copy {diagnosis.copy}, below" if diagnosis.copy else "applied, below"
    lines += [
        "",
        *render_visit(first),
        *render_measured(
            first,
            diagnosis.measure_plans,
            budget_s=diagnosis.measure_budget_s,
            warmups=diagnosis.measure_warmups,
            rounds=diagnosis.scratch_info or diagnosis.rounds,
        ),
        *render_advice(first.advice, applied=ran, plan=diagnosis.plan),
    ]
    if diagnosis.scratch_info:
        lines += ["", *render_scratch(diagnosis)]
    if diagnosis.applied:
        lines += ["", "applied" + (f" on the copy {diagnosis.copy}" if diagnosis.copy else "") + ":"]
        lines += [f"  {a['action']} ({a['seconds']:.2f} s): {a['text']}" for a in diagnosis.applied]
        if diagnosis.commits is not None:
            lines += diagnosis.commits.lines()
        if diagnosis.lost_race_line:
            lines.append(f"  lost: {diagnosis.lost_race_line}")
    for v in diagnosis.visits[1:]:
        lines += [
            "",
            *render_visit(v),
            *render_measured(
                v,
                diagnosis.measure_plans,
                "before the rewrite" if v.health.state == BEFORE_REWRITE else "after",
                budget_s=diagnosis.measure_budget_s,
                warmups=diagnosis.measure_warmups,
            ),
            *render_advice(v.advice),
        ]
    if diagnosis.applied and diagnosis.lost_race is None:
        lines += ["", *render_before_after(diagnosis)]
    last = diagnosis.last
    heap = diagnosis.heap
    lines += [
        "",
        f"doctor: {diagnosis.seconds:.1f} s; driver heap peak at most "
        f"{_mb(heap.get('driver_heap_peak_bytes'))} (its pools' peaks summed) of "
        f"{_mb(heap.get('driver_heap_max_bytes'))}",
        f"verdict: {last.advice.verdict}"
        + (f" ({last.advice.basis})" if last is diagnosis.first and last.advice.proposed else "")
        + (f"; actions: {', '.join(last.advice.actions)}" if last.advice.actions else "")
        + f" (exit {diagnosis.exit_code})",
    ]
    return "\n".join(lines)
