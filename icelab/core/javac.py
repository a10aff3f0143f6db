"""Java sources icelab runs in a JVM (the metadata builder's, the doctor's entry counts), compiled
once with javac (JDK 17) against PySpark's jars and the Iceberg runtime jar, and cached per user
under a directory named by the sources' digest, so that changed sources compile again."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyspark

from icelab.core.errors import UserError
from icelab.core.preflight import iceberg_jar


def classpath(jar_name: str | None) -> str:
    """PySpark's jars, and the Iceberg runtime jar when named (None: sources that need only
    Spark's and Hadoop's classes)."""
    jars = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent) / "jars"
    return os.pathsep.join([f"{jars}/*", *([str(iceberg_jar(jar_name))] if jar_name else [])])


def sources_sha(sources: Sequence[Path]) -> str:
    """12 hex digits of the sources, in the order given: the compiled classes' version."""
    return hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()[:12]


def cache_dir(package: str, sources: Sequence[Path]) -> Path:
    """Where these sources' classes live: per user, outside the repository."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "icelab" / f"{package}-{sources_sha(sources)}"


def compiled(sources: Sequence[Path], package: str, name: str, jar_name: str | None) -> Path:
    """The class directory of `sources` (Java package `package`), compiled now unless these
    sources were compiled before; `name` names the cache and the error.

    Raises:
        UserError: when javac is missing or fails.
    """
    out = cache_dir(package, sources)
    classes = out / Path(*package.split("."))
    if all((classes / f"{path.stem}.class").exists() for path in sources):
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise UserError(f"javac not found: the {name} needs a JDK 17 (javac on PATH)")
    # Compiled beside, then renamed: two processes compiling at once never see half a directory.
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    done = subprocess.run(
        [javac, "-nowarn", "-cp", classpath(jar_name), "-d", str(tmp), *map(str, sources)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise UserError(f"javac failed on the {name}: {done.stderr.strip().splitlines()[0]}")
    if out.exists():
        shutil.rmtree(tmp)
    else:
        tmp.rename(out)
    return out


def load_class(gateway: Any, classes: Path, beside: Any, name: str) -> Any:
    """Class `name` from the compiled `classes`, by a class loader whose parent is the one that
    loaded `beside` (a JVM object), so the class sees the same Iceberg or Hadoop classes."""
    jvm = gateway.jvm
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.io.File(str(classes)).toURI().toURL()
    return jvm.java.net.URLClassLoader(urls, beside.getClass().getClassLoader()).loadClass(name)


def static_method(gateway: Any, cls: Any, name: str, *parameter_types: str) -> Callable[..., Any]:
    """`cls.name(...)`, a static method with parameters of these class names, as a Python call."""
    jvm = gateway.jvm
    types = gateway.new_array(jvm.java.lang.Class, len(parameter_types))
    for i, type_name in enumerate(parameter_types):
        types[i] = cls.getClassLoader().loadClass(type_name)
    method = cls.getMethod(name, types)

    def call(*values: Any) -> Any:
        args = gateway.new_array(jvm.java.lang.Object, len(values))
        for i, value in enumerate(values):
            args[i] = value
        return method.invoke(None, args)

    return call


def compiled_method(
    gateway: Any,
    sources: Sequence[Path],
    name: str,
    jar_name: str | None,
    beside: Any,
    method: str,
    *parameter_types: str,
) -> Callable[..., Any]:
    """The static `method` of `sources`' first class (compiled now unless cached; `name` names
    the cache and the error), loaded beside the JVM object `beside`, as a Python call.

    Raises:
        UserError: when javac is missing or fails.
    """
    first = sources[0]
    package = next(
        line.split()[1].rstrip(";") for line in first.read_text().splitlines() if line.startswith("package ")
    )
    classes = compiled(sources, package, name, jar_name)
    cls = load_class(gateway, classes, beside, f"{package}.{first.stem}")
    return static_method(gateway, cls, method, *parameter_types)
