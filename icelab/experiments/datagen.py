"""Experiment `datagen`: build (or reuse) and verify a dataset, print and store its figures.

With `experiment.baseline=true` it also times Spark's own baseline: the same rows, already
materialized in memory, written once as one partitioned Parquet write. The build's cost is
reported as a multiple of that. With `experiment.bound=true` it measures what this machine allows
the build (`icelab.datagen.bound`), and reports the build's wall time as a multiple of that.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from omegaconf import DictConfig
from pyspark import StorageLevel

from icelab.bench.context import Context, open_context
from icelab.core import run_state, storage
from icelab.core.results import write_json
from icelab.core.storage import Storage
from icelab.datagen.bound import bound
from icelab.datagen.build import Built
from icelab.datagen.generate import generate_all, generate_rows, partition_columns
from icelab.datagen.store_requests import requests_line


def baseline_write(ctx: Context, built: Built) -> dict[str, Any]:
    """Seconds to write every row once, from memory, as partitioned Parquet."""
    ds = built.dataset.config
    parts = partition_columns(ds)
    df = generate_all(ctx.spark, ds).repartition(*parts).sortWithinPartitions(*parts)
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    t0 = time.perf_counter()
    rows = df.count()
    t1 = time.perf_counter()
    scratch = storage.join(storage.to_uri(ctx.paths.data_dir), f".baseline-{uuid.uuid4().hex[:8]}")
    try:
        df.write.partitionBy(*parts).option("compression", ds.compression).parquet(scratch)
        t2 = time.perf_counter()
        written = sum(f.size for f in Storage(ctx.spark).list_files(scratch, ".parquet"))
    finally:
        Storage(ctx.spark).delete(scratch)
        df.unpersist()
    write_s = t2 - t1
    build_s = built.info["ingest"]["seconds"]["total_s"]
    return {
        "rows": rows,
        "materialize_s": t1 - t0,
        "write_s": write_s,
        "rows_per_s": rows / write_s,
        "mb_per_s": written / 1e6 / write_s,
        "build_over_baseline": build_s / write_s,
    }


def _written_by(workers: int) -> str:
    return "written by the driver" if workers == 1 else f"summed over {workers} worker processes"


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def bound_line(b: dict[str, Any], build_wall_s: float | None) -> str:
    """The console's bound line: the bound, its parts and floors, and the build's wall time over
    it (its completion mark's `build_wall_s`) when there is one."""
    parts = " + ".join(f"{k.removesuffix('_s')} {v:.1f}" for k, v in b["parts_s"].items())
    f = b["floors"]
    line = (
        f"  bound        {b['bound_s']:.1f} s = ({parts}) / {b['cores']} cores; a file "
        f"{f['write_file_ms']:.2f} ms to write, {f['read_file_ms']:.2f} ms to read"
    )
    if f.get("pages_per_file"):
        line += (
            f" ({f['pages_per_file']} pages, each {f['compress_call_us']:.1f} us compressed and "
            f"{f['decompress_call_us']:.1f} us decompressed as a page of a few bytes)"
        )
    line += f"; {f['write_mb_per_s']:.0f} MB/s written, {f['read_mb_per_s']:.0f} MB/s read"
    if build_wall_s:
        line += f"; this build {build_wall_s / b['bound_s']:.1f}x that"
    return line


def report(built: Built, baseline: dict[str, Any] | None, floor: dict[str, Any] | None = None) -> str:
    """The summary a user reads on the console."""
    info, s = built.info, built.info["summary"]
    pq, ice, ing = s["parquet"], s["iceberg"], info["ingest"]
    sec = ing["seconds"]
    state = "reused (built " + info["created_utc"] + ")" if built.reused else "built now"
    if "copy" in info:
        copy = info["copy"]
        state += f" (copied from {copy['from']}: {copy['files']:,} files in {copy['seconds']} s)"
    lines = [
        f"dataset {info['name']}-{info['hash']}: {state}",
        f"  location     {info['uri']}",
        f"  rows         {s['rows']:,} over {s['day_partitions']} day partitions, "
        f"{info['config']['commits']} commits",
        f"  parquet      {pq['files']:,} files, {_mb(pq['bytes'])}, {pq['directories']} directories",
        f"  iceberg      {ice['files']:,} files, {_mb(ice['bytes'])}, {ice['snapshots']} snapshots, "
        f"{ice['manifests']} manifests ({_mb(ice['manifest_bytes'])})",
        f"  manifests    median span {ice['manifest_span_median']:.0%} of day partitions "
        f"(min {ice['manifest_span_min']:.0%}, max {ice['manifest_span_max']:.0%})",
        f"  {'build (src)' if 'copy' in info else 'build':<12} {sec['total_s']:.1f} s = generate "
        f"{sec['generate_s']:.1f} + parquet "
        f"{sec['parquet_s']:.1f} + iceberg {sec['iceberg_s']:.1f}"
        + (
            f" ({_written_by(ing['workers'])}; of iceberg, {sec['commit_s']:.1f} s committing in the driver)"
            if ing.get("workers")
            else ""
        ),
        f"  throughput   parquet {ing['parquet']['rows_per_s']:,.0f} rows/s "
        f"{ing['parquet']['mb_per_s']:.1f} MB/s | iceberg {ing['iceberg']['rows_per_s']:,.0f} rows/s "
        f"{ing['iceberg']['mb_per_s']:.1f} MB/s | both formats + generation "
        f"{ing['both_formats_rows_per_s']:,.0f} rows/s",
    ]
    totals = info["verification"]
    readings = " = ".join(totals)
    rows, checksum = next(iter(totals.values()))
    lines.append(f"  verified     {readings}: {rows:,} rows, checksum {checksum}")
    if "verified_by" in info:  # a build before verify.readers_per_day has no such record
        by = "; ".join(f"{name} {days}" for name, days in info["verified_by"].items())
        lines.append(f"  read by      {by}")
    if "build_wall_s" in info:
        lines.append(f"  wall time    {info['build_wall_s'] / 60:.1f} min with summary and verification")
    if "profile_s" in info:
        parts = " | ".join(f"{step} {s:.1f} s" for step, s in info["profile_s"].items())
        lines.append(f"  profile      {parts} (wall)")
    if "s3a_requests" in info:
        lines.append(requests_line(info["s3a_requests"], info["config"]["commits"]))
    if floor:
        lines.append(bound_line(floor, info.get("build_wall_s")))
    if baseline:
        lines.append(
            f"  baseline     one Parquet write from memory {baseline['write_s']:.1f} s "
            f"({baseline['rows_per_s']:,.0f} rows/s, {baseline['mb_per_s']:.1f} MB/s); "
            f"build = {baseline['build_over_baseline']:.2f}x that"
        )
        lines.append(
            f"  same layout  the same {info['config']['commits']} commits written from memory to "
            f"Parquet alone: {sec['parquet_s']:.1f} s; build = {sec['total_s'] / sec['parquet_s']:.2f}x that"
        )
    return "\n".join(lines)


@run_state.tracked
def run(cfg: DictConfig) -> None:
    """Build or reuse the dataset, print its summary, store it with provenance."""
    ctx = open_context(cfg)
    built = ctx.dataset()
    baseline = baseline_write(ctx, built) if cfg.experiment.baseline else None
    floor = None
    if cfg.experiment.bound:
        ds = built.dataset.config
        floor = bound(built.dataset, generate_rows(ctx.spark, ds, 0, 0, 1).schema, built.info)
    run_dir = ctx.new_run("datagen", built)
    write_json(
        run_dir / "summary.json",
        {"reused": built.reused, "dataset": built.info, "baseline": baseline, "bound": floor},
    )
    print(report(built, baseline, floor))
    print(f"  results      {run_dir}")
