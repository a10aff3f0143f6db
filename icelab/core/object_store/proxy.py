"""A TCP proxy on 127.0.0.1 that delays every byte, and counts the S3 requests it carries.

This kernel has no netem, so a network round trip to a remote store is made here: each chunk
read from one side is written to the other `delay_ms` later (half the round trip each way), in
the order it came, without waiting for the chunks before it to be delivered first: the delay is
latency, not a bandwidth limit. The proxy runs an asyncio loop in a thread of its own.

It also reads the requests going to the server (HTTP/1.1 heads; bodies skipped by their
Content-Length or chunked encoding) and counts them by method and what the path names: the
service (`/`), a bucket (`/bucket`, listings among them) or an object (`/bucket/key`).

With a `FaultPlan` it also misbehaves as cloud stores do, on a seeded share of the requests: it
answers `503 SlowDown` itself (the request never reaches the server), resets the connection
part-way through the response, or holds the response back `stall_s`. S3 clients send one request
at a time on a connection and the next only after the whole response, which is what lets a fault
be tied to one request. The faults dealt are tallied (`faults()`), as the requests are.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

CHUNK = 256 * 1024
FAULTS = ("slowdown", "reset", "stall")
# What S3 answers when a prefix takes more requests than it can serve; clients back off and retry.
SLOWDOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
SLOWDOWN = (
    b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
    b"Connection: close\r\n\r\n%s" % (len(SLOWDOWN_BODY), SLOWDOWN_BODY)
)
_CLOSE, _RESET = object(), object()  # what a delivery queue holds after a fault's last bytes


def _body_start(chunk: bytes) -> int:
    """Where a response's body begins in `chunk`: after its head when the chunk starts one (the
    chunk's length when the head fills it), else 0 (the chunk is body)."""
    if not chunk.startswith(b"HTTP/"):
        return 0
    end = chunk.find(b"\r\n\r\n")
    return len(chunk) if end < 0 else end + 4


@dataclass(frozen=True)
class FaultPlan:
    """The share of requests that meet each fault, drawn in order from `seed`.

    Args:
        seed: the draws' seed (the same seed deals the same faults to the same request order).
        slowdown_rate: answered `503 SlowDown` by the proxy, never forwarded.
        reset_rate: forwarded, then the connection is reset half-way through the response's body
            (its head arrives whole: a cut head would read as a changed ETag, which S3A does not
            retry, rather than as the dropped connection this fault stands for). A response
            without a body arrives whole.
        stall_rate: forwarded, the response held back `stall_s` seconds.
        stall_s: how long a stalled response waits.
    """

    seed: int = 0
    slowdown_rate: float = 0.0
    reset_rate: float = 0.0
    stall_rate: float = 0.0
    stall_s: float = 0.0

    @property
    def active(self) -> bool:
        """Whether any request can meet a fault."""
        return self.slowdown_rate + self.reset_rate + self.stall_rate > 0


class Dealer:
    """Deals each request its fault (or none), in arrival order, from the plan's seeded draws."""

    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self._rng = random.Random(plan.seed)
        self._lock = threading.Lock()
        self._dealt: Counter[str] = Counter()

    def deal(self) -> str | None:
        """`slowdown`, `reset`, `stall` or None for the next request."""
        p = self.plan
        with self._lock:
            draw = self._rng.random()
            for fault, rate in zip(FAULTS, (p.slowdown_rate, p.reset_rate, p.stall_rate), strict=True):
                if draw < rate:
                    self._dealt[fault] += 1
                    return fault
                draw -= rate
            return None

    def tally(self) -> dict[str, int]:
        """Faults dealt so far, by kind."""
        with self._lock:
            return {f: self._dealt[f] for f in FAULTS if self._dealt[f]}


class _Link:
    """One client connection: the fault dealt to its request in flight, until its response comes,
    and when that request's head was read."""

    def __init__(self, dealer: Dealer | None, answered: Callable[[float], None]) -> None:
        self.dealer = dealer
        self.pending: str | None = None
        self.asked_at: float | None = None
        self._answered = answered  # told each request's time from its head to its answer's first byte

    def on_head(self) -> None:
        if self.dealer is not None:
            self.pending = self.dealer.deal()
        self.asked_at = time.monotonic()

    def on_answer(self) -> None:
        """The first bytes of an answer came from the server (S3A asks one request at a time per
        connection, so they answer the request last asked)."""
        if self.asked_at is not None:
            self._answered(time.monotonic() - self.asked_at)
            self.asked_at = None

    def take(self, fault: str) -> bool:
        """Whether `fault` is pending (and clear it)."""
        if self.pending == fault:
            self.pending = None
            return True
        return False


def path_kind(target: str) -> str:
    """`service`, `bucket` or `object`, for a path-style request target."""
    parts = [p for p in urlsplit(target).path.split("/") if p]
    return "service" if not parts else "bucket" if len(parts) == 1 else "object"


class RequestCounter:
    """Parses the client-to-server byte stream of one connection and counts request heads."""

    def __init__(
        self, counts: Counter[str], lock: threading.Lock, on_head: Callable[[], None] | None = None
    ) -> None:
        self._counts, self._lock = counts, lock
        self._on_head = on_head  # called once per request head, after it is counted
        self._buf = b""
        self._body = 0  # bytes of the current request's body still to skip
        self._chunked = False
        self._lost = False  # a stream it cannot parse is forwarded, no longer counted

    def feed(self, data: bytes) -> None:
        if self._lost:
            return
        self._buf += data
        try:
            while self._step():
                pass
        except (ValueError, IndexError):
            self._lost, self._buf = True, b""
            with self._lock:
                self._counts["unparsed connection"] += 1

    def _step(self) -> bool:
        if self._body:
            taken = min(self._body, len(self._buf))
            self._buf, self._body = self._buf[taken:], self._body - taken
            return bool(self._buf)
        if self._chunked:
            return self._chunk()
        end = self._buf.find(b"\r\n\r\n")
        if end < 0:
            return False
        head, self._buf = self._buf[:end].decode("latin-1"), self._buf[end + 4 :]
        lines = head.split("\r\n")
        method, target = (lines[0].split(" ") + ["", ""])[:2]
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        with self._lock:
            self._counts[f"{method} {path_kind(target)}"] += 1
        if self._on_head is not None:
            self._on_head()
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self._body = 0 if self._chunked else int(headers.get("content-length") or 0)
        return True

    def _chunk(self) -> bool:
        end = self._buf.find(b"\r\n")
        if end < 0:
            return False
        size = int(self._buf[:end].split(b";")[0] or b"0", 16)
        if size == 0:  # last chunk, then trailers up to an empty line
            trailer_end = self._buf.find(b"\r\n\r\n", end)
            if trailer_end < 0 and self._buf[end : end + 4] != b"\r\n\r\n":
                return False
            cut = end + 4 if self._buf[end : end + 4] == b"\r\n\r\n" else trailer_end + 4
            self._buf, self._chunked = self._buf[cut:], False
            return True
        self._buf, self._body = self._buf[end + 2 :], size + 2  # the data and its CRLF
        return True


class DelayProxy:
    """Listens on 127.0.0.1:<port> and forwards to `target_host:target_port`, `delay_ms` each way.

    Args:
        target_host, target_port: the server.
        one_way_ms: the delay added in each direction (a round trip gains twice this).
        faults: which share of requests meets which fault; None or an inactive plan: none.
    """

    def __init__(
        self, target_host: str, target_port: int, one_way_ms: float, faults: FaultPlan | None = None
    ) -> None:
        self.target = (target_host, target_port)
        self.delay_s = one_way_ms / 1000.0
        self.port = 0
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._dealer = Dealer(faults) if faults is not None and faults.active else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()
        self._longest_s = 0.0

    def start(self) -> int:
        """Start serving in a background thread; return the port."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._client, "127.0.0.1", 0, limit=CHUNK)
                )
                self.port = self._server.sockets[0].getsockname()[1]
            except BaseException as exc:  # noqa: BLE001 (handed to the starting thread)
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=serve, name="icelab-delay-proxy", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self.port

    def stop(self) -> None:
        """Close the listener and every connection, end the thread."""
        loop = self._loop
        if loop is None or self._thread is None:
            return

        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.sleep(0)

        with contextlib.suppress(RuntimeError):  # the loop already ended
            asyncio.run_coroutine_threadsafe(close(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=10)
        self._loop = self._thread = None

    def counts(self) -> dict[str, int]:
        """A snapshot of the requests seen so far: {"GET object": 12, "HEAD object": 30, ...}."""
        with self._lock:
            return dict(sorted(self._counts.items()))

    def faults(self) -> dict[str, int]:
        """The faults dealt so far, by kind: {"slowdown": 3, "reset": 1}; empty without a plan."""
        return self._dealer.tally() if self._dealer is not None else {}

    def longest_ms(self, reset: bool = False) -> float:
        """The longest a request waited for the first byte of its answer since the last reset, in
        milliseconds: from its head read by the proxy to the server's first byte back, the added
        delay on the way there included (a stall the proxy deals, on the way back, is not)."""
        with self._lock:
            found = self._longest_s * 1000
            if reset:
                self._longest_s = 0.0
        return found

    def _answered(self, seconds: float) -> None:
        with self._lock:
            self._longest_s = max(self._longest_s, seconds)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target, limit=CHUNK)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        link = _Link(self._dealer, self._answered)
        counter = RequestCounter(self._counts, self._lock, link.on_head)
        down: asyncio.Queue = asyncio.Queue()
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, asyncio.Queue(), link, counter.feed, answer=down),
                self._pipe(up_reader, writer, down, link),
            )
        except (asyncio.CancelledError, OSError):
            pass
        finally:
            for w in (writer, up_writer):
                w.close()
            self._tasks.discard(task)

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        queue: asyncio.Queue,
        link: _Link,
        observe: Callable[[bytes], None] | None = None,
        answer: asyncio.Queue | None = None,
    ) -> None:
        """Copy one direction: each chunk is delivered `delay_s` after it was read, in order.

        The request direction (`answer`: the response direction's queue) answers a request dealt
        `slowdown` itself; the response direction stalls or resets the response to one dealt so.
        """

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if data is _RESET:
                    writer.transport.abort()  # an RST, as a dropped connection looks to the client
                    return
                if data is _CLOSE:
                    writer.close()
                    return
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        sender = asyncio.ensure_future(deliver())
        cut_body = False  # a reset was dealt to a response whose head came in a chunk of its own
        try:
            while True:
                data = await reader.read(CHUNK)
                if observe is not None and data:
                    observe(data)
                if answer is None and data:
                    link.on_answer()
                due = time.monotonic() + self.delay_s
                if answer is not None and link.take("slowdown"):
                    # The request stops here: the server never sees it; the client gets S3's
                    # throttling answer a round trip later, and the connection closes.
                    await answer.put((due + self.delay_s, SLOWDOWN))
                    await answer.put((due + self.delay_s, _CLOSE))
                    await queue.put((due, _CLOSE))
                    break
                if answer is None and data and (cut_body or link.take("reset")):
                    start = _body_start(data)
                    if cut_body and data.startswith(b"HTTP/"):
                        cut_body = False  # the next response: the one dealt a reset had no body
                    elif start < len(data):
                        # The head arrives whole, the body half-way, then the RST: what S3A retries.
                        await queue.put((due, data[: start + max(1, (len(data) - start) // 2)]))
                        await queue.put((due, _RESET))
                        break
                    else:
                        cut_body = True  # the head came alone: the body's first chunk is cut
                if answer is None and data and link.take("stall"):
                    assert link.dealer is not None
                    due += link.dealer.plan.stall_s
                await queue.put((due, data))
                if not data:
                    break
            await sender
        finally:
            sender.cancel()
