"""The metadata builder's JVM: MetaBuilder.java (and ShapedBuilder.java, for shaped states; both
extend BuilderBase.java) compiled once per source (javac, JDK 17) against PySpark's jars and the
Iceberg runtime jar, then run as its own process with a progress bar.

Entries written through py4j one by one are far too slow (DESIGN.md); one JVM writing
manifests from a thread pool writes about 20k entries a second on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tqdm import tqdm

from icelab.core import javac
from icelab.core.errors import UserError

SOURCE = Path(__file__).with_name("MetaBuilder.java")
SHAPED_SOURCE = SOURCE.with_name("ShapedBuilder.java")
SHARED_SOURCE = SOURCE.with_name("BuilderBase.java")
SOURCES = sorted(SOURCE.parent.glob("*.java"))
MAIN = "icelab.metadata.MetaBuilder"

# The version of the entries each builder writes, which a state's hash names: a state written
# by other code is another state. A declared version rather than the sources' digest, so that
# a refactoring that writes the same entries keeps every state's hash (a 10M-entry state takes
# long to rebuild, and stored results name their states by hash). Sources that write other
# entries need a new version, and so new state hashes. tests/datagen/test_builder_version.py
# pins the sources each version was checked for. Each first value is the digest of its builder's
# one source file when the hash named that file, so those states kept their hashes.
BUILDER_VERSION = "c3c200d80605"
SHAPED_VERSION = "209e477cafcd"


def builder_sources_sha(source: Path) -> str:
    """12 hex digits of the sources that write a builder's entries: its own file, then the
    shared class (the order fixed)."""
    return hashlib.sha256(source.read_bytes() + SHARED_SOURCE.read_bytes()).hexdigest()[:12]


def compiled(jar_name: str) -> Path:
    """The builders' class directory, compiled now unless these sources were compiled before.

    Raises:
        UserError: when javac is missing or fails.
    """
    return javac.compiled(SOURCES, "icelab.metadata", "metadata builder", jar_name)


def run_builder(
    args: dict[str, Any],
    entries: int,
    jar_name: str,
    heap: str,
    desc: str,
    progress: bool = True,
    java_options: str = "",
    main: str = MAIN,
    hadoop: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Run a builder (`main`: MetaBuilder's class unless named) with `key=value` arguments, and
    `java_options` (shell words) after the heap flag; return its closing JSON line.

    `hadoop`: Hadoop settings for the builder's FileSystems (a state measured on a store is
    written through a staging file system: `icelab.datagen.metadata.staging`), given in a
    core-site.xml of its own.

    Raises:
        UserError: with the JVM's last error line when it fails.
    """
    with tempfile.TemporaryDirectory(prefix="icelab-builder-") as site:
        classpath = [str(compiled(jar_name)), javac.classpath(jar_name)]
        if hadoop:
            Path(site, "core-site.xml").write_text(core_site(hadoop))
            classpath = [site, *classpath]
        cmd = ["java", f"-Xmx{heap}", *shlex.split(java_options), "-cp", os.pathsep.join(classpath), main]
        return _follow([*cmd, *(f"{k}={v}" for k, v in args.items())], entries, desc, progress)


def core_site(settings: Mapping[str, str]) -> str:
    """A Hadoop core-site.xml of these settings."""
    props = "".join(
        f"<property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
        for k, v in settings.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{props}</configuration>\n'


def _follow(cmd: list[str], entries: int, desc: str, progress: bool) -> dict[str, Any]:
    """Run the builder's command, its progress lines on a bar; its closing JSON line."""
    result: dict[str, Any] = {}
    # stderr to a file, not a pipe: a pipe nobody reads while stdout is followed would stall the
    # JVM once its logging filled the pipe's buffer.
    with (
        tempfile.TemporaryFile("w+") as stderr,
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True) as proc,
    ):
        assert proc.stdout is not None
        with tqdm(total=entries, desc=desc, unit="entry", unit_scale=True, disable=not progress) as bar:
            for line in proc.stdout:
                msg = json.loads(line)
                if "entries" in msg and not msg.get("done"):
                    bar.update(msg["entries"] - bar.n)
                if msg.get("done"):
                    result = msg
        proc.wait()
        stderr.seek(0)
        errors = stderr.read()
    if proc.returncode != 0 or not result:
        last = [ln for ln in errors.strip().splitlines() if "Exception" in ln or "Error" in ln]
        raise UserError(f"metadata builder failed ({desc}): {(last or ['exit ' + str(proc.returncode)])[0]}")
    return result
