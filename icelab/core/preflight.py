"""Start-up checks that must fail with one clear line before a JVM is ever launched."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

from icelab.core.errors import UserError

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
        supported = ", ".join(map(str, SUPPORTED_JAVA))
        raise UserError(f"Java {major} at {java} is not supported (supported: {supported}); install Java 17")
    return major


RUNTIME_JAR = r"iceberg-spark-runtime-(\d+\.\d+)_(\d+\.\d+)-.+\.jar"


def pyspark_build() -> tuple[str, str]:
    """Spark and Scala major.minor of the installed PySpark, read from its spark-core jar.

    The jars are in SPARK_HOME when set (spark-submit sets it, and imports PySpark from a zip
    there), else beside the pyspark package.

    Raises:
        UserError: when PySpark or its jars are missing.
    """
    spec = importlib.util.find_spec("pyspark")
    home = os.environ.get("SPARK_HOME") or (Path(spec.origin).parent if spec and spec.origin else None)
    jars = Path(home) / "jars" if home else None
    for jar in sorted(jars.glob("spark-core_*.jar")) if jars else []:
        match = re.fullmatch(r"spark-core_(\d+\.\d+)-(\d+\.\d+)\..*\.jar", jar.name)
        if match:
            return match.group(2), match.group(1)
    raise UserError("PySpark and its jars are not installed (pip install -e .)")


def iceberg_jar(name: str) -> Path:
    """Locate the Iceberg Spark runtime jar shipped by snowpark-connect-deps-iceberg.

    Args:
        name: jar file name, from `engine.iceberg_jar`.

    Raises:
        UserError: when the jar is missing, is not a runtime jar, or is built for another Spark
            or Scala than the installed PySpark; the message lists the jars that fit.
    """
    try:
        from snowpark_connect_deps_iceberg import get_jars_dir, list_jars
    except ImportError as exc:
        raise UserError("snowpark-connect-deps-iceberg is not installed (pip install -e .)") from exc
    spark, scala = pyspark_build()
    package = f"snowpark-connect-deps-iceberg=={importlib.metadata.version('snowpark-connect-deps-iceberg')}"
    try:
        builds = {jar.name: re.fullmatch(RUNTIME_JAR, jar.name) for jar in list_jars()}
    except RuntimeError as exc:  # the package's own check: its jars directory is missing
        raise UserError(f"{package} is installed without its jars ({exc}); reinstall it") from None
    fits = [jar for jar, m in builds.items() if m and m.groups() == (spark, scala)]
    accepted = f"engine.iceberg_jar accepts: {', '.join(fits) or f'none in {package}'}"
    build = re.fullmatch(RUNTIME_JAR, name)
    if build and build.groups() != (spark, scala):
        raise UserError(
            f"Iceberg jar '{name}' is built for Spark {build[1]} / Scala {build[2]}, but PySpark "
            f"here is Spark {spark} / Scala {scala} ({accepted})"
        )
    if name not in builds:
        raise UserError(f"Iceberg jar '{name}' not found in {package} ({accepted})")
    if not build:
        raise UserError(f"'{name}' is not an Iceberg Spark runtime jar ({accepted})")
    return get_jars_dir() / name
