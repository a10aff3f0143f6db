"""The delay proxy's faults against a small HTTP server on loopback (no Ceph, no JVM): a 503
SlowDown the server never sees, a connection reset part-way through a response, a stalled
response; seeded, tallied, and none without a plan."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from icelab.core.object_store.proxy import Dealer, DelayProxy, FaultPlan

BODY = b"x" * (2 * 1024 * 1024)  # larger than the proxy's chunk: a reset lands mid-body
ETAG = '"68b96eefbd55da727d01ba3b473c2f79"'


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.seen = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as S3 clients use it

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.seen += 1
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.send_header("ETag", ETAG)
        self.end_headers()
        time.sleep(0.05)  # the head goes alone, as RGW sends it: the proxy reads it as a chunk
        self.wfile.write(BODY)

    def log_message(self, *args) -> None:  # noqa: ANN002 (quiet)
        pass


@pytest.fixture
def through() -> Iterator[Callable[[FaultPlan | None], tuple[DelayProxy, Server]]]:
    """A proxy with a fault plan in front of the server."""
    server, made = Server(), []
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def make(plan: FaultPlan | None) -> tuple[DelayProxy, Server]:
        proxy = DelayProxy("127.0.0.1", server.server_address[1], 1, plan)
        proxy.start()
        made.append(proxy)
        return proxy, server

    yield make
    for proxy in made:
        proxy.stop()
    server.shutdown()
    server.server_close()


def get(proxy: DelayProxy, path: str = "/icelab/data/k") -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=30)
    conn.request("GET", path)
    return conn.getresponse()


def test_a_slowdown_is_answered_by_the_proxy_and_never_reaches_the_server(through):
    proxy, server = through(FaultPlan(slowdown_rate=1.0))
    for _ in range(3):
        response = get(proxy)
        assert response.status == 503
        assert b"<Code>SlowDown</Code>" in response.read()
    assert server.seen == 0
    assert proxy.faults() == {"slowdown": 3}
    assert proxy.counts() == {"GET object": 3}  # what the client sent, faults included


def test_a_reset_cuts_the_response_part_way(through):
    proxy, server = through(FaultPlan(reset_rate=1.0))
    try:
        got = get(proxy).read()
    except (ConnectionError, http.client.HTTPException):  # a cut status line or body
        got = None
    # Or a cut head without its Content-Length, which http.client reads as a body ended early.
    assert got != BODY
    assert server.seen == 1 and proxy.faults() == {"reset": 1}


def test_a_reset_keeps_the_head_whole_and_cuts_the_body(through):
    """S3A retries a dropped connection; a cut head reads as a changed ETag, which it does not."""
    proxy, _ = through(FaultPlan(reset_rate=1.0))
    response = get(proxy)
    assert response.status == 200 and response.getheader("ETag") == ETAG
    with pytest.raises((ConnectionError, http.client.IncompleteRead)):
        response.read()


def test_a_stalled_response_arrives_whole_and_late(through):
    proxy, _ = through(FaultPlan(stall_rate=1.0, stall_s=0.5))
    t0 = time.perf_counter()
    assert get(proxy).read() == BODY
    assert time.perf_counter() - t0 >= 0.5  # held back at least the stall
    assert proxy.faults() == {"stall": 1}


def test_without_a_plan_every_request_is_carried(through):
    for plan in (None, FaultPlan(seed=3)):  # no plan; a plan with every rate 0
        proxy, server = through(plan)
        before = server.seen
        assert get(proxy).read() == BODY
        assert server.seen == before + 1 and proxy.faults() == {}


def test_faults_are_dealt_from_the_seed_at_their_rates():
    plan = FaultPlan(seed=7, slowdown_rate=0.05, reset_rate=0.02, stall_rate=0.01, stall_s=1)
    first, again = Dealer(plan), Dealer(plan)
    dealt = [first.deal() for _ in range(10_000)]
    assert dealt == [again.deal() for _ in range(10_000)]  # the same seed, the same faults
    assert Dealer(FaultPlan(seed=8, slowdown_rate=0.05)).tally() == {}
    tally = first.tally()
    assert 400 <= tally["slowdown"] <= 600 and 120 <= tally["reset"] <= 280 and 40 <= tally["stall"] <= 160
    assert sum(tally.values()) == sum(d is not None for d in dealt)


def test_the_longest_request_is_the_slowest_answer_since_the_last_reset(through, monkeypatch):
    proxy, _ = through(None)
    get(proxy).read()
    quick = proxy.longest_ms(reset=True)
    # The server takes 1.5 s to answer the next request: the proxy's clock counts it.
    real = Handler.do_GET
    monkeypatch.setattr(Handler, "do_GET", lambda self: (time.sleep(1.5), real(self)))
    get(proxy).read()
    assert quick < 1_000 <= 1_500 <= proxy.longest_ms(reset=True)
    # Reset: only what comes after counts.
    monkeypatch.setattr(Handler, "do_GET", real)
    get(proxy).read()
    assert proxy.longest_ms() < 1_000
