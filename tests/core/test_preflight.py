"""Start-up checks: the real Java and jar are found; a missing jar or an unsupported Java
is one clear error."""

from __future__ import annotations

import importlib.util
import os
import stat
from pathlib import Path

import pyspark
import pytest

from icelab.core.errors import UserError
from icelab.core.preflight import check_java, iceberg_jar, java_major_version, pyspark_build

JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"


def test_the_pinned_jar_is_installed():
    path = iceberg_jar(JAR)
    assert path.is_file() and path.name == JAR


def test_spark_home_is_where_spark_submit_keeps_the_jars(monkeypatch):
    # spark-submit imports PySpark from SPARK_HOME/python/lib/pyspark.zip, with no jars beside it.
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("SPARK_HOME", str(Path(pyspark.__file__).parent))
    assert pyspark_build() == ("3.5", "2.12")
    monkeypatch.delenv("SPARK_HOME")
    with pytest.raises(UserError, match="PySpark and its jars are not installed"):
        pyspark_build()


def test_missing_jar_is_one_line():
    with pytest.raises(UserError, match="'iceberg-spark-runtime-9.9.jar' not found"):
        iceberg_jar("iceberg-spark-runtime-9.9.jar")


def test_this_machine_has_a_supported_java():
    assert check_java() in (11, 17)


def fake_java(tmp_path, banner: str) -> str:
    script = tmp_path / "java"
    script.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.parametrize(
    ("banner", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('java version "1.8.0_402"', 8),
        ('openjdk version "21" 2023-09-19', 21),
    ],
)
def test_java_version_parsing(tmp_path, banner, major):
    assert java_major_version(fake_java(tmp_path, banner)) == major


def test_unsupported_java_is_rejected(tmp_path, monkeypatch):
    home = tmp_path / "jdk21"
    (home / "bin").mkdir(parents=True)
    java = fake_java(home / "bin", 'openjdk version "21.0.2" 2024-01-16')
    assert os.path.basename(java) == "java"
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(UserError, match="Java 21 .* not supported"):
        check_java()
