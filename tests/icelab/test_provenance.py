"""Provenance: credentials never reach a results file; git and machine are recorded."""

from __future__ import annotations

import json

from icelab.provenance import git_state, machine, redact, versions


def test_credential_like_keys_are_redacted():
    conf = {
        "spark.hadoop.fs.s3a.secret.key": "hunter2",
        "spark.hadoop.fs.s3a.access.key": "AKIAFAKE",
        "spark.hadoop.fs.azure.sas.container.account": "sig=fake",
        "spark.sql.catalog.x.token": "tok",
        "spark.ui.enabled": "false",
    }
    text = json.dumps(redact(conf))
    for secret in ("hunter2", "AKIAFAKE", "sig=fake", 'tok"'):
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
