"""Where a number came from: machine, versions, git state, Spark settings.

Secrets never reach a file: any setting whose key looks like a credential is redacted.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_SECRET = re.compile(r"secret|password|passwd|token|credential|access\.?key|sas|private", re.I)
PACKAGES = ["pyspark", "snowpark-connect-deps-iceberg", "duckdb", "pyarrow", "pandas", "hydra-core"]


def redact(conf: dict[str, str]) -> dict[str, str]:
    """Copy of a settings dict with credential-like values replaced."""
    return {k: ("***redacted***" if _SECRET.search(k) else v) for k, v in conf.items()}


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state() -> dict[str, object]:
    """Commit of the harness and whether the work tree had uncommitted changes."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def machine() -> dict[str, object]:
    """CPU, cores and memory of the driver machine."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        match = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = match.group(1).strip() if match else cpu
    mem_gib = None
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        match = re.search(r"MemTotal:\s*(\d+)", meminfo.read_text())
        mem_gib = round(int(match.group(1)) / 1024**2, 1) if match else None
    return {
        "hostname": platform.node(),
        "os": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
    }


def versions(java_version: str | None = None, iceberg_jar: str | None = None) -> dict[str, str]:
    """Python, package and JVM-side versions."""
    found = {"python": sys.version.split()[0]}
    for pkg in PACKAGES:
        try:
            found[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            found[pkg] = "missing"
    if java_version:
        found["java"] = java_version
    if iceberg_jar:
        found["iceberg_jar"] = Path(iceberg_jar).name
    return found


def spark_versions(spark) -> dict[str, str]:  # noqa: ANN001 (SparkSession, kept import-free)
    """Versions the running JVM reports: Spark, Java, Iceberg."""
    jvm = spark.sparkContext._jvm
    iceberg = jvm.org.apache.iceberg.IcebergBuild.version()
    return {
        "spark": spark.version,
        "java": jvm.java.lang.System.getProperty("java.version"),
        "iceberg": str(iceberg),
    }
