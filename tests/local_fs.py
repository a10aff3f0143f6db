"""Hadoop's local file system for the tests' JVMs, with permissions set by a system call.

Hadoop's local file system sets the permissions of every file and directory it creates (a
table's data files, their `.crc` files, Iceberg's metadata, the committers' directories). Without
Hadoop's native library, which PySpark does not ship, each is a `chmod` child process: about
24,000 in a suite. The tests' JVMs use a subclass that makes the same chmod as a system call
(java.nio), as Hadoop does when its native library is loaded: the same files, bytes and modes.

`install` compiles it once per source (icelab.core.javac's cache), puts its jar on the class path
of every Spark JVM this process and its children start (SPARK_DIST_CLASSPATH, which Spark's
launcher appends after its own jars, so the class archive of tests/jvm_archive.py still applies),
and returns the override that makes it the `file:` file system.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from icelab.core import javac
from icelab.core.errors import UserError

SOURCE = Path(__file__).with_name("SyscallChmodLocalFileSystem.java")
PACKAGE = "icelab.tests"
CLASS = f"{PACKAGE}.{SOURCE.stem}"
# Beside the compiled classes, named by the source's digest: a changed source is a new jar.
_CLASSES = javac.cache_dir(PACKAGE, [SOURCE])
JAR = _CLASSES.with_name(f"{_CLASSES.name}.jar")
CLASSPATH_ENV = "SPARK_DIST_CLASSPATH"


def _write_jar(classes: Path, jar: Path) -> None:
    """Zip the class directory into `jar`, through a temporary name (another process may be
    writing the same jar)."""
    tmp = jar.with_name(f"{jar.name}.tmp{os.getpid()}")
    with zipfile.ZipFile(tmp, "w") as out:
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
    tmp.replace(jar)


def install() -> list[str]:
    """Make the file system available to the Spark JVMs this process starts; the config
    overrides that select it, or none when it cannot be compiled (no javac: Hadoop's own)."""
    if not JAR.is_file():
        try:
            classes = javac.compiled([SOURCE], PACKAGE, "tests' local file system", None)
        except UserError:
            return []
        _write_jar(classes, JAR)
    entries = [e for e in os.environ.get(CLASSPATH_ENV, "").split(os.pathsep) if e]
    if str(JAR) not in entries:
        os.environ[CLASSPATH_ENV] = os.pathsep.join([*entries, str(JAR)])
    return [f"++engine.conf.spark.hadoop.fs.file.impl={CLASS}"]
