"""A store that stops answering mid-run, without Ceph or Spark: an external endpoint waited for
within `storage.outage_wait_s` (`Store.outage`), and a run that fails while its store is down
ends `interrupted` in one line (`run_state.tracked`). RGW killed in a real run, restarted or not:
tests/core/test_object_store.py."""

from __future__ import annotations

import http.server
import re
import threading
import time

import pytest

from icelab.core import object_store, run_state, supervisor
from icelab.core.config import StorageConfig
from icelab.core.errors import RunInterrupted


class Answering:
    """An HTTP server on loopback that answers every request 200, from `start()` on."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.server: http.server.HTTPServer | None = None

    def start(self) -> None:
        class Ok(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 (the standard library's name)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", self.port), Ok)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


def external(port: int, wait_s: float) -> object_store.Store:
    cfg = StorageConfig(kind="object", endpoint=f"http://127.0.0.1:{port}", outage_wait_s=wait_s)
    return object_store.Store(cfg, "s3a://icelab/data", object_store.s3.Endpoint(cfg.endpoint, "a", "b"))


def test_an_external_store_back_within_the_bound_is_waited_for():
    port = supervisor.free_port()
    server = Answering(port)
    timer = threading.Timer(1.0, server.start)
    timer.start()
    try:
        line = external(port, 20).outage("q01 parquet 1d")
        assert re.fullmatch(
            rf"the object store at http://127\.0\.0\.1:{port} stopped answering during q01 parquet 1d; "
            r"it answers again after [\d.]+ s, measuring goes on",
            line,
        )
    finally:
        timer.join()
        server.stop()


def test_an_external_store_not_back_within_the_bound_interrupts_the_run():
    port = supervisor.free_port()
    store = external(port, 1.5)
    t0 = time.monotonic()
    with pytest.raises(RunInterrupted) as lost:
        store.outage("q01 parquet 1d")
    assert 1.5 <= time.monotonic() - t0 < 10  # waited its bound, not longer
    assert str(lost.value) == (
        f"the object store at http://127.0.0.1:{port} stopped answering during q01 parquet 1d; "
        "not back within storage.outage_wait_s=1.5 s"
    )


def test_a_run_failing_while_its_store_is_down_ends_interrupted_in_one_line(tmp_path, monkeypatch, capsys):
    port = supervisor.free_port()
    monkeypatch.setattr(object_store, "_active", external(port, 60))
    run_dir = tmp_path / "run"

    @run_state.tracked
    def run() -> None:
        run_dir.mkdir()
        run_state.start(run_dir)
        run_state.update(run_dir, rows=5)
        raise RuntimeError("Py4JJavaError: An error occurred while calling o7234.collectToPython")

    with pytest.raises(SystemExit) as ended:
        run()
    assert ended.value.code == 3
    line = (
        f"the object store at http://127.0.0.1:{port} stopped answering "
        "(RuntimeError outside the measurements)"
    )
    assert capsys.readouterr().err == f"icelab: {line}; run interrupted, 5 rows kept in {run_dir}\n"
    record = run_state.read(run_dir)
    assert (record["status"], record["ended"], record["rows"]) == ("interrupted", line, 5)


def test_a_run_failing_while_its_store_answers_fails_as_before(tmp_path, monkeypatch):
    server = Answering(supervisor.free_port())
    server.start()
    monkeypatch.setattr(object_store, "_active", external(server.port, 60))
    run_dir = tmp_path / "run"

    @run_state.tracked
    def run() -> None:
        run_dir.mkdir()
        run_state.start(run_dir)
        raise RuntimeError("a bug")

    try:
        with pytest.raises(RuntimeError, match="a bug"):
            run()
    finally:
        server.stop()
    assert run_state.read(run_dir)["status"] == "failed"
