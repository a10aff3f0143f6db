"""`python run.py ... ++engine.conf.<credential>=...`: no file the run writes holds the credential,
in results or in Hydra's output directory, while the settings themselves are recorded redacted."""

from __future__ import annotations

import json
import uuid

import yaml

from icelab.core.provenance import REDACTED
from icelab.tools.validate import check_run
from tests.conftest import SMOKE_PY, run_py

SAS_KEY = "spark.hadoop.fs.azure.sas.icelab.acct.blob.core.windows.net"
URI_KEY = "spark.hadoop.icelab.test.location"  # an innocent name: only the URI's userinfo is secret


def test_no_file_of_a_run_holds_a_credential(tiny, data_dir, tmp_path):
    fakes = {
        "spark.hadoop.fs.s3a.secret.key": f"FAKE-SECRET-{uuid.uuid4().hex}",
        "spark.hadoop.javax.jdo.option.ConnectionPassword": f"FAKE-PASSWORD-{uuid.uuid4().hex}",
        SAS_KEY: f"sv=2024-05-04&sp=rl&sig=FAKE-SAS-{uuid.uuid4().hex}",
    }
    uri_secret = f"FAKE-URI-{uuid.uuid4().hex}"
    uri = f"s3a://FAKEACCESSID:{uri_secret}@bucket/icelab"
    results, outputs = tmp_path / "results", tmp_path / "outputs"
    proc = run_py(
        *SMOKE_PY,
        "profile=[as_ingested,rewrite_16kb]",
        f"paths.data_dir={data_dir}",
        f"paths.results_dir={results}",
        f"hydra.run.dir={outputs}",
        *(f"++engine.conf.{key}='{value}'" for key, value in fakes.items()),
        f"++engine.conf.{URI_KEY}='{uri}'",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = (results / "runs" / "smoke").iterdir()
    assert check_run(run).problems == []
    written = [p for root in (results, outputs) for p in root.rglob("*") if p.is_file()]
    # Every kind of file a run writes was there to be searched.
    assert {"env.json", "config.yaml", "run.json", "answers.json", "measurements.parquet"} <= {
        p.name for p in written
    }
    assert {".csv", ".png", ".svg"} <= {p.suffix for p in written}
    assert not (outputs / ".hydra").exists()
    secrets = [*fakes.values(), uri_secret, fakes[SAS_KEY].rsplit("=", 1)[1]]
    leaks = [(p, s) for p in written for s in secrets if s.encode() in p.read_bytes()]
    assert leaks == []
    # The settings are recorded, their values redacted.
    spark_conf = json.loads((run / "env.json").read_text())["spark_conf"]
    assert {spark_conf[key] for key in fakes} == {REDACTED}
    assert spark_conf[URI_KEY] == f"s3a://{REDACTED}@bucket/icelab"
    conf = yaml.safe_load((run / "config.yaml").read_text())["engine"]["conf"]["spark"]["hadoop"]
    assert conf["fs"]["s3a"]["secret"]["key"] == REDACTED
    assert conf["javax"]["jdo"]["option"]["ConnectionPassword"] == REDACTED
    assert conf["fs"]["azure"]["sas"]["icelab"]["acct"]["blob"]["core"]["windows"]["net"] == REDACTED
