"""Start-up checks that must fail with one clear line before a JVM is ever launched."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from icelab.errors import UserError

SUPPORTED_JAVA = (11, 17)


def java_executable() -> str:
    """Return the java binary Spark will launch (JAVA_HOME first, then PATH).

    Raises:
        UserError: when no java can be found.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file():
            return str(candidate)
        raise UserError(f"JAVA_HOME={java_home} has no bin/java; install Java 17 or fix JAVA_HOME")
    found = shutil.which("java")
    if not found:
        raise UserError("Java not found: Spark 3.5 needs Java 17 on PATH or in JAVA_HOME")
    return found


def java_major_version(java: str) -> int:
    """Parse the major version from `java -version` (which prints to stderr)."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise UserError(f"could not read the Java version from {java} -version")
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 else major  # "1.8.0" means Java 8


def check_java() -> int:
    """Check that a Java Spark 3.5 supports is present; return its major version."""
    java = java_executable()
    major = java_major_version(java)
    if major not in SUPPORTED_JAVA:
        raise UserError(f"Java {major} at {java} is not supported by Spark 3.5 here; install Java 17")
    return major


def iceberg_jar(name: str) -> Path:
    """Locate the Iceberg Spark runtime jar shipped by snowpark-connect-deps-iceberg.

    Args:
        name: jar file name, from `engine.iceberg_jar`.
    """
    try:
        from snowpark_connect_deps_iceberg import get_jar_path
    except ImportError as exc:
        raise UserError("snowpark-connect-deps-iceberg is not installed (pip install -e .)") from exc
    try:
        return Path(get_jar_path(name))
    except (FileNotFoundError, RuntimeError) as exc:
        raise UserError(f"Iceberg jar '{name}' not found in snowpark-connect-deps-iceberg==1.0.2") from exc
