"""The tests' local file system (tests/local_fs.py) is the one the tests' Spark uses, and it
leaves every file and directory with the mode Hadoop's own local file system gives it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests import local_fs

MODES = (0o644, 0o600, 0o755, 0o751, 0o640, 0o777, 0o000)


@pytest.mark.skipif(not local_fs.JAR.is_file(), reason="no javac: the tests run on Hadoop's own")
def test_the_sessions_file_system_sets_the_modes_hadoops_own_sets(ctx, tmp_path: Path):
    spark = ctx.spark
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    ours = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI.create("file:///"), conf)
    assert ours.getClass().getName() == local_fs.CLASS
    hadoops = jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    hadoops.initialize(jvm.java.net.URI.create("file:///"), conf)
    permission = jvm.org.apache.hadoop.fs.permission.FsPermission

    def modes(fs, name: str) -> list[tuple[int, int]]:
        """(file mode, directory mode) for each of MODES, set by `fs`."""
        found = []
        for mode in MODES:
            file, folder = tmp_path / f"{name}-{mode:o}", tmp_path / f"{name}-{mode:o}.d"
            out = fs.create(jvm.org.apache.hadoop.fs.Path(file.as_uri()), True)
            out.close()
            fs.mkdirs(jvm.org.apache.hadoop.fs.Path(folder.as_uri()))
            for path in (file, folder):
                fs.setPermission(jvm.org.apache.hadoop.fs.Path(path.as_uri()), permission(mode))
            found.append((stat.S_IMODE(os.stat(file).st_mode), stat.S_IMODE(os.stat(folder).st_mode)))
        return found

    assert modes(ours, "ours") == modes(hadoops, "hadoops") == [(m, m) for m in MODES]

    def default(fs, name: str) -> tuple[int, int]:
        """The modes of a file and a directory created with Hadoop's defaults (through the umask)."""
        file, folder = tmp_path / f"default-{name}", tmp_path / f"default-{name}.d" / "sub"
        fs.create(jvm.org.apache.hadoop.fs.Path(file.as_uri()), True).close()
        fs.mkdirs(jvm.org.apache.hadoop.fs.Path(folder.as_uri()))
        return stat.S_IMODE(os.stat(file).st_mode), stat.S_IMODE(os.stat(folder).st_mode)

    assert default(ours, "ours") == default(hadoops, "hadoops")
