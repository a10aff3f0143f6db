"""Provenance: credentials never reach a results file; git and machine are recorded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from icelab.core.provenance import REDACTED, git_state, machine, redact, versions


def test_credential_like_keys_are_redacted():
    conf = {
        "spark.hadoop.fs.s3a.secret.key": "hunter2",
        "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "acctkey",
        "spark.hadoop.javax.jdo.option.ConnectionPassword": "pw",
        "spark.hadoop.fs.s3a.access.key": "AKIAFAKE",
        "spark.hadoop.fs.azure.sas.container.account": "sig=fake",
        "spark.sql.catalog.x.token": "tok",
        "spark.ui.enabled": "false",
    }
    text = json.dumps(redact(conf))
    for secret in ("hunter2", "acctkey", '"pw"', "AKIAFAKE", "sig=fake", 'tok"'):
        assert secret not in text
    assert redact(conf)["spark.ui.enabled"] == "false"


def test_machine_and_versions():
    assert machine()["cores"] >= 1
    found = versions(java_version="17", iceberg_jar="/x/iceberg-spark-runtime-3.5_2.12-1.10.2.jar")
    assert found["pyspark"].startswith("3.5")
    assert found["iceberg_jar"].endswith("1.10.2.jar")


def test_git_state_has_commit_and_dirty_flag():
    state = git_state()
    assert set(state) == {"commit", "dirty"}


def _git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=icelab-test", "-c", "user.email=test@icelab.invalid"]
    done = subprocess.run(["git", *identity, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository of its own with one committed file."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "tracked.txt").write_text("one\n")
    _git(tmp_path, "add", "tracked.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_clean_checkout_is_not_dirty(checkout: Path):
    assert git_state(checkout) == {"commit": _git(checkout, "rev-parse", "HEAD"), "dirty": False}


def test_an_edited_tracked_file_makes_it_dirty(checkout: Path):
    (checkout / "tracked.txt").write_text("two\n")
    assert git_state(checkout)["dirty"] is True


def test_an_untracked_file_leaves_it_clean(checkout: Path):
    # Results and data written beside the code are untracked; they change no measuring code.
    (checkout / "new.txt").write_text("x\n")
    assert git_state(checkout)["dirty"] is False


def test_without_git_the_state_is_unknown(checkout: Path, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("no-git")))  # no git on the PATH
    assert git_state(checkout) == {"commit": None, "dirty": None}


def test_outside_a_checkout_the_state_is_unknown(tmp_path_factory, monkeypatch):
    bare = tmp_path_factory.mktemp("not-a-repo")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(bare.parent))  # do not find a repo above it
    assert git_state(bare) == {"commit": None, "dirty": None}


def test_nested_settings_are_judged_on_their_full_path():
    secret = "FAKE-SECRET-0123456789"
    cfg = OmegaConf.create(
        {
            "engine": {
                "conf": {
                    "spark": {
                        "hadoop": {"fs": {"s3a": {"secret": {"key": secret}}, "azure": {"sas": "sv=1"}}}
                    },
                    "spark.ui.enabled": False,
                    "spark.authenticate": True,  # a boolean carries no credential
                },
                "tokens": ["a1", "b2"],
                "copy": "${engine.conf.spark.hadoop.fs.s3a.secret.key}",  # a copy under an innocent key
            },
            "dataset": {"name": "tiny", "sas_share": None},
        }
    )
    out = redact(cfg)
    assert out["engine"]["conf"]["spark"]["hadoop"]["fs"]["s3a"]["secret"]["key"] == REDACTED
    assert out["engine"]["conf"]["spark"]["hadoop"]["fs"]["azure"]["sas"] == REDACTED
    assert out["engine"]["tokens"] == [REDACTED, REDACTED]
    assert out["engine"]["copy"] == REDACTED
    assert out["engine"]["conf"]["spark.ui.enabled"] is False
    assert out["engine"]["conf"]["spark.authenticate"] is True
    assert out["dataset"] == {"name": "tiny", "sas_share": None}  # `dataset` is no `sas`
    assert secret not in json.dumps(out)


def test_credentials_inside_values_are_redacted():
    values = {
        "location": "s3a://AKIAFAKE:hunter2@bucket/icelab/data",
        "url": "jdbc:postgresql://db:5432/meta?user=icelab&password=hunter2&ssl=true",
        "opts": "-Dfs.s3a.secret.key=hunter2 -Dlog4j2.configurationFile=file:/x.properties",
        "azure": "abfss://container@account.dfs.core.windows.net/icelab",  # container@account: no secret
        "plain": "file:///data/tiny-401aede443e7",
    }
    out = redact(values)
    assert "hunter2" not in json.dumps(out) and "AKIAFAKE" not in json.dumps(out)
    assert out["location"] == f"s3a://{REDACTED}@bucket/icelab/data"
    assert out["url"] == f"jdbc:postgresql://db:5432/meta?user=icelab&password={REDACTED}&ssl=true"
    assert out["opts"] == f"-Dfs.s3a.secret.key={REDACTED} -Dlog4j2.configurationFile=file:/x.properties"
    assert out["azure"] == values["azure"] and out["plain"] == values["plain"]
