"""icelab's own S3 PUT (`icelab.core.object_store.s3.put_object`) against a loopback server that
answers "try again" a set number of times."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from icelab.core.errors import UserError
from icelab.core.object_store import s3


class _Store(http.server.BaseHTTPRequestHandler):
    answers: list[int] = []  # statuses still to give, then 200
    bodies: list[bytes] = []

    def do_PUT(self) -> None:  # noqa: N802 (http.server's name)
        self.bodies.append(self.rfile.read(int(self.headers["content-length"])))
        status = self.answers.pop(0) if self.answers else 200
        body = b"" if status == 200 else b"<Error><Code>SlowDown</Code></Error>"
        self.send_response(status)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def store() -> Iterator[s3.Endpoint]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Store.answers, _Store.bodies = [], []
    yield s3.Endpoint(f"http://127.0.0.1:{server.server_port}", "key", "secret")
    server.shutdown()
    server.server_close()


def test_a_put_answered_slow_down_is_sent_again(store):
    _Store.answers = [503, 500]
    sent_again = s3.put_object(s3.connect(store), store, "/bucket/a.parquet", b"bytes", retries=3)
    assert sent_again == 2
    assert _Store.bodies == [b"bytes"] * 3


def test_past_its_retries_the_put_is_one_line_naming_the_answer(store):
    _Store.answers = [503, 503]
    with pytest.raises(UserError, match=r"PUT /bucket/a.parquet answered 503 SlowDown"):
        s3.put_object(s3.connect(store), store, "/bucket/a.parquet", b"bytes", retries=1)
    assert len(_Store.bodies) == 2


def test_a_refusal_is_not_sent_again(store):
    _Store.answers = [403]
    with pytest.raises(UserError, match="answered 403"):
        s3.put_object(s3.connect(store), store, "/bucket/a.parquet", b"bytes", retries=3)
    assert len(_Store.bodies) == 1
