"""Where a number came from: machine, versions, git state, Spark settings.

Secrets never reach a file: `redact` replaces any setting whose key path looks like a credential,
and passwords inside URIs, in everything a run writes as JSON or YAML (icelab.core.results).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ["pyspark", "snowpark-connect-deps-iceberg", "duckdb", "pyarrow", "pandas", "hydra-core"]

REDACTED = "***redacted***"
# A setting is a credential when its full dotted key path names one anywhere, e.g.
# engine.conf.spark.hadoop.fs.s3a.secret.key, fs.azure.sas.<container>.<account>,
# fs.azure.account.key.<account>, javax.jdo.option.ConnectionPassword. Short words (sas, sig, pwd)
# count only as a whole word, so that `dataset` or `signal` do not.
_SECRET_WORDS = (
    r"secret|passw(?:or)?d|token|credential|private|signature|auth(?!or)"
    r"|(?:access|account|api|client|encryption|master|session)[._-]?key"
    r"|(?<![a-z])(?:sas|sig|pwd)(?![a-z])"
)
_SECRET = re.compile(_SECRET_WORDS, re.I)
# Inside any string value: the password of a URI's userinfo (s3a://id:secret@bucket, jdbc URLs)
# and credential-named parameters (?password=..., &sig=..., -Dfs.s3a.secret.key=...).
# `scheme://name@host` without a colon stays: abfss://container@account is no credential.
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/@\s:]*:[^/@\s]*@", re.I)
_PARAM = re.compile(rf"(?P<name>[\w.-]*(?:{_SECRET_WORDS})[\w.-]*)=[^\s&;,'\"]+", re.I)


def redact(data: Any, path: str = "") -> Any:
    """Copy of `data` with every credential replaced by REDACTED, at any depth.

    Dicts, lists and OmegaConf containers (resolved first) are walked. A value is redacted whole
    when the dotted path of keys leading to it looks like a credential; in every string, URI
    userinfo passwords, credential-named `name=value` parameters and copies of the redacted
    values (an interpolation can repeat one under an innocent key) are replaced.

    Args:
        data: a flat Spark conf, a resolved config, a run record: anything JSON- or YAML-like.
        path: the dotted key path of `data` itself.
    """
    if isinstance(data, (DictConfig, ListConfig)):
        data = OmegaConf.to_container(data, resolve=True)
    # Longest first, so a secret that contains another is replaced whole; very short values
    # would garble unrelated text.
    copies = sorted({v for v in _secret_values(data, path) if len(v) >= 6}, key=len, reverse=True)
    return _redact(data, path, copies)


def _is_secret(path: str, value: Any) -> bool:
    # None and booleans carry no credential (spark.authenticate: true is worth keeping).
    return bool(_SECRET.search(path)) and value is not None and not isinstance(value, bool)


def _secret_values(data: Any, path: str) -> Iterator[str]:
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from _secret_values(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, (list, tuple)):
        for value in data:
            yield from _secret_values(value, path)
    elif _is_secret(path, data):
        yield str(data)


def _redact(data: Any, path: str, copies: list[str]) -> Any:
    if isinstance(data, Mapping):
        return {k: _redact(v, f"{path}.{k}" if path else str(k), copies) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_redact(v, path, copies) for v in data]  # list items share their key's path
    if _is_secret(path, data):
        return REDACTED
    if isinstance(data, str):
        text = _PARAM.sub(rf"\g<name>={REDACTED}", _USERINFO.sub(rf"\g<scheme>{REDACTED}@", data))
        for secret in copies:
            text = text.replace(secret, REDACTED)
        return text
    return data


def git(repo: Path, *args: str) -> str | None:
    """`git *args` in `repo`, its output stripped; None where git cannot answer."""
    try:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state(repo: Path = REPO) -> dict[str, object]:
    """Commit of the harness and whether the work tree had uncommitted changes to tracked files.

    Both are None where git cannot tell (no git on the PATH, or `repo` is no checkout).
    """
    commit = git(repo, "rev-parse", "HEAD")
    status = git(repo, "status", "--porcelain", "--untracked-files=no")
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
