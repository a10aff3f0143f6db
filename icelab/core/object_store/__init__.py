"""`storage=object`: the run's S3 store, from start to stop.

Either icelab starts Ceph RGW on loopback (`rgw.py`) or the run connects to an existing endpoint
(`storage.endpoint`, keys from environment variables). Before Spark starts, the endpoint, the
keys and the bucket are checked (`s3.py`: one line instead of a Java stack trace), and with
`storage.latency_ms` a delay proxy (`proxy.py`) is put between Spark and the store. The store
then gives Spark its S3A settings and jars, DuckDB its S3 secret, and env.json its record.

A store that stops answering mid-run is given `storage.outage_wait_s` to come back (`outage`):
RGW icelab started gets radosgw restarted once (its data is on the OSD, untouched), an external
store is waited for; if it is not back by then the run ends `interrupted` (`RunInterrupted`).

One store per process at a time, like the Spark session: `open_store` starts it, `close` (called
when the run ends, and at exit) stops it. The RGW state directory is held under an exclusive
lock for as long as the run uses it, so two runs never start two clusters on one directory.
"""

from __future__ import annotations

import atexit
import datetime as dt
import importlib.util
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from icelab.core import locks, run_state, storage
from icelab.core.config.storage import StorageConfig
from icelab.core.errors import RunInterrupted, UserError
from icelab.core.object_store import rgw, s3
from icelab.core.object_store.proxy import DelayProxy, FaultPlan

# RGW's user on loopback: fixed keys (nothing listens beyond 127.0.0.1); redacted in results anyway.
RGW_ACCESS_KEY = "ICELABLOOPBACKACCESS"
RGW_SECRET_KEY = "icelab-loopback-secret-key-0123456789"
JARS = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")
JARS_INSTALL = "pip install --no-deps sagemaker-pyspark==1.4.5"


def s3a_jars() -> list[Path]:
    """hadoop-aws and the AWS SDK bundle it was built with, from the installed sagemaker_pyspark.

    Raises:
        UserError: when the package or either jar is missing (naming the install command).
    """
    spec = importlib.util.find_spec("sagemaker_pyspark")
    folder = Path(spec.origin).parent / "jars" if spec and spec.origin else None
    found = [folder / name for name in JARS] if folder else []
    if not found or not all(jar.is_file() for jar in found):
        raise UserError(f"storage=object needs the S3A jars ({', '.join(JARS)}): {JARS_INSTALL}")
    return found


def _ceph_version() -> str | None:
    try:
        out = subprocess.run(["radosgw", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    words = out.stdout.split()
    return words[2] if len(words) > 2 and words[:2] == ["ceph", "version"] else None


@dataclass
class Store:
    """A live S3 store and how the run reaches it."""

    config: StorageConfig
    data_dir: str  # s3a://bucket/prefix
    server: s3.Endpoint  # the S3 server itself
    rgw: rgw.Rgw | None = None
    proxy: DelayProxy | None = None
    lock_key: str | None = None
    bucket_created: bool = False
    version: str | None = None
    # Each outage met (`outage`), as run.json's `store_events` records it; the wall clock (epoch
    # seconds) at which icelab last saw the store answer (None: never asked), the earliest an
    # outage can have begun.
    events: list[dict[str, Any]] = field(default_factory=list)
    answered_s: float | None = None

    @property
    def bucket(self) -> str:
        return urlparse(self.data_dir).netloc

    @property
    def spark_endpoint(self) -> str:
        """Where Spark sends its requests: the delay proxy when there is one, else the server."""
        if self.proxy is not None:
            return f"http://127.0.0.1:{self.proxy.port}"
        return self.server.url

    @property
    def mechanism(self) -> str:
        """How latency is added: `proxy` (the delay proxy) or `none`."""
        return "proxy" if self.proxy is not None else "none"

    def spark_conf(self) -> dict[str, str]:
        """S3A settings and jars for the Spark session (the keys redacted wherever recorded)."""
        jars = [str(jar) for jar in s3a_jars()]
        hadoop = {
            "fs.s3a.endpoint": self.spark_endpoint,
            "fs.s3a.path.style.access": "true",
            "fs.s3a.connection.ssl.enabled": str(self.server.secure).lower(),
            "fs.s3a.access.key": self.server.access_key,
            "fs.s3a.secret.key": self.server.secret_key,
            # Only the keys given: no lookup of environment or instance-profile credentials.
            "fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "fs.s3a.endpoint.region": self.config.region,
            # A refused or unreachable store fails in seconds, not after minutes of retries.
            "fs.s3a.attempts.maximum": "3",
            "fs.s3a.retry.limit": "3",
            "fs.s3a.connection.establish.timeout": "5000",
        }
        if self.config.signer:
            # RGW over plain HTTP rejects the 1.11 SDK's SigV4 uploads (XAmzContentSHA256Mismatch).
            hadoop["fs.s3a.signing-algorithm"] = self.config.signer
        # Through spark.jars only (Spark's class loader, which Hadoop's FileSystem lookup uses), not
        # spark.driver.extraClassPath: jars put before Spark's own make a JVM ignore a class archive
        # made for Spark's class path, and the tests' store JVMs then cost 3.4 CPU-s more each.
        return {
            **{f"spark.hadoop.{k}": v for k, v in hadoop.items()},
            "spark.jars": ",".join(jars),
        }

    def duckdb_secret(self) -> str:
        """DuckDB's CREATE SECRET for this store (httpfs); DuckDB reads the server directly."""
        ep = self.server

        def quote(text: str) -> str:
            return "'" + text.replace("'", "''") + "'"

        return (
            "CREATE OR REPLACE SECRET icelab_store (TYPE s3, "
            f"KEY_ID {quote(ep.access_key)}, SECRET {quote(ep.secret_key)}, ENDPOINT {quote(ep.host)}, "
            f"REGION {quote(self.config.region)}, URL_STYLE 'path', USE_SSL {str(ep.secure).lower()})"
        )

    def requests(self) -> dict[str, int]:
        """S3 requests the delay proxy carried so far, by method and path kind (`GET object`,
        `HEAD object`, `GET bucket` for listings, ...); empty without a proxy."""
        return self.proxy.counts() if self.proxy is not None else {}

    def faults(self) -> dict[str, int]:
        """Faults the delay proxy dealt so far, by kind (`slowdown`, `reset`, `stall`)."""
        return self.proxy.faults() if self.proxy is not None else {}

    def requests_since(self, before: dict[str, int]) -> Callable[[], dict[str, Any]]:
        """A function giving `{"proxy_requests": ..., "proxy_faults": ...}`: the requests carried
        since `before`, and every fault dealt."""

        def fields() -> dict[str, Any]:
            now = self.requests()
            carried = {k: n - before.get(k, 0) for k, n in now.items() if n - before.get(k, 0)}
            return {"proxy_requests": carried, "proxy_faults": self.faults()}

        return fields

    def longest_ms(self, reset: bool = False) -> float | None:
        """The delay proxy's longest request since its last reset (`DelayProxy.longest_ms`), in
        milliseconds; None without a proxy."""
        return self.proxy.longest_ms(reset) if self.proxy is not None else None

    def answers(self) -> bool:
        """Whether the S3 server answers HTTP at all (any status will do); 2 s at most."""
        # Asked twice before it counts as gone: on a loaded machine one request of a live store
        # can miss its 2 s, and a store taken for gone is restarted.
        for attempt in range(2):
            asked = time.time()
            try:
                s3.request(self.server, "HEAD", "/", timeout_s=2)
            except UserError:
                if attempt == 0:
                    time.sleep(0.5)
                continue
            self.answered_s = asked
            return True
        return False

    def outage(self, during: str) -> str:
        """The store stopped answering during `during`: bring it back within `storage.outage_wait_s`,
        restarting radosgw once when icelab started it, else waiting for it to answer.

        Returns:
            The line saying how it came back.

        Raises:
            RunInterrupted: not back within the bound (0: at once, no restart); one line.
        """
        wait, t0, detected = self.config.outage_wait_s, time.monotonic(), time.time()
        last_answered = self.answered_s
        lost = f"the object store at {self.server.url} stopped answering during {during}"
        why = ""
        if wait and self.rgw is not None:
            try:
                self.rgw.restart_gateway(t0 + wait)
            except UserError as exc:
                why = f" (restarting radosgw: {exc})"
        # Polled only while someone else may bring it back: a restart that failed has no one.
        while not why and not self.answers():
            if time.monotonic() - t0 >= wait:
                break
            time.sleep(0.5)
        back = not why and self.answers()
        self._event(during, last_answered, detected, time.monotonic() - t0, back, why)
        if not back:
            raise RunInterrupted(f"{lost}; not back within storage.outage_wait_s={wait:g} s{why}")
        how = "radosgw restarted" if self.rgw is not None else "it answers again"
        return f"{lost}; {how} after {time.monotonic() - t0:.1f} s, measuring goes on"

    def _event(
        self, during: str, last_answered: float | None, detected: float, seconds: float, back: bool, why: str
    ) -> None:
        """Keep the outage met during `during` (and put it in every open run's run.json at once, so
        a run killed later still says it): when icelab last saw the store answer (null: it had
        not asked yet), when it found it gone, how long it took to come back (or to give up),
        and how."""
        event = {
            "kind": "outage",
            "phase": during,
            "last_answered_utc": _utc(last_answered) if last_answered is not None else None,
            "detected_utc": _utc(detected),
            "seconds": round(seconds, 1),
            "restarted": self.rgw is not None and bool(self.config.outage_wait_s) and not why,
            "outcome": "back" if back else "lost",
            "detail": why.strip(" ()") or None,
        }
        self.events.append(event)
        run_state.add_event(event)

    @staticmethod
    def outage_window(event: dict[str, Any], since_s: float) -> tuple[float, float]:
        """The wall-clock span (epoch seconds) an outage may have covered: from the store's last
        answer before it, or `since_s` (when the asker began to watch) if that is later or there
        was none, to the moment it was back (or given up)."""
        last = event["last_answered_utc"]
        start = max(dt.datetime.fromisoformat(last).timestamp(), since_s) if last else since_s
        seen = dt.datetime.fromisoformat(event["detected_utc"]).timestamp()
        return start, seen + event["seconds"]

    def record(self) -> dict[str, Any]:
        """What env.json says of the store: kind, server, endpoints, latency (never a key)."""
        return {
            "kind": "object",
            "server": f"ceph-rgw {self.version}" if self.rgw else "external",
            "endpoint": self.server.url,
            "spark_endpoint": self.spark_endpoint,
            "data_dir": self.data_dir,
            "bucket_created": self.bucket_created,
            "latency_ms": self.config.latency_ms,
            "latency_mechanism": self.mechanism,
            "faults": self.config.faults.model_dump() if self.config.faults.active else None,
            "start_s": self.rgw.started_s if self.rgw else None,
        }

    def close(self) -> None:
        """Stop the proxy and RGW, release the state directory; safe to call twice."""
        global _active
        try:
            if self.proxy is not None:
                self.proxy.stop()
            if self.rgw is not None:
                self.rgw.stop()
        finally:
            if self.lock_key is not None:
                locks.release(self.lock_key)
                self.lock_key = None
            storage.forget_store(self.data_dir)
            if _active is self:
                _active = None


_active: Store | None = None


def active() -> Store | None:
    """The store this process has open, if any."""
    return _active


def record(cfg: StorageConfig, data_dir: str) -> dict[str, Any]:
    """env.json's storage block: the open store's, or local storage's."""
    if _active is not None:
        return _active.record()
    return {"kind": cfg.kind, "data_dir": data_dir, "latency_ms": 0, "latency_mechanism": "none"}


def outage_of(exc: BaseException) -> RunInterrupted | None:
    """A run that failed with `exc` outside a measurement while its store does not answer: the
    store's outage is the cause (a Java stack trace through S3A would hide it); None otherwise."""
    if _active is None or isinstance(exc, (KeyboardInterrupt, SystemExit)) or _active.answers():
        return None
    return RunInterrupted(
        f"the object store at {_active.server.url} stopped answering ({type(exc).__name__} "
        "outside the measurements)"
    )


def _utc(epoch_s: float) -> str:
    return dt.datetime.fromtimestamp(epoch_s, dt.timezone.utc).isoformat(timespec="milliseconds")


def _credentials(cfg: StorageConfig) -> tuple[str, str]:
    names = (cfg.access_key_env, cfg.secret_key_env)
    keys = [os.environ.get(name) for name in names]
    unset = [name for name, value in zip(names, keys, strict=True) if not value]
    if unset:
        raise UserError(
            f"storage.endpoint={cfg.endpoint} needs its keys in the environment: {' and '.join(unset)} "
            "unset (storage.access_key_env / storage.secret_key_env name other variables)"
        )
    return keys[0], keys[1]  # type: ignore[return-value]


def data_uri(cfg: StorageConfig, data_dir: str) -> str:
    """The run's data directory on the store: `paths.data_dir`, which must be an s3a:// URI.

    Raises:
        UserError: when it is not.
    """
    parsed = urlparse(data_dir)
    if parsed.scheme != "s3a" or not parsed.netloc:
        raise UserError(
            f"storage=object keeps the data in a bucket: paths.data_dir={data_dir!r} is not an s3a:// URI "
            f"(default: s3a://{cfg.bucket}/data)"
        )
    return data_dir.rstrip("/")


def open_store(cfg: StorageConfig, data_dir: str) -> Store | None:
    """Start (or connect to) the run's store, check it and its bucket; None for local storage.

    Raises:
        UserError: missing jars or Ceph, port taken, store not starting, unreachable endpoint,
            refused keys, missing bucket; one line each.
    """
    global _active
    if cfg.kind != "object":
        return None
    uri = data_uri(cfg, data_dir)
    s3a_jars()  # before anything starts: a missing jar is the quickest thing to report
    if _active is not None:
        _active.close()
    if cfg.endpoint:
        access, secret = _credentials(cfg)
        store = Store(cfg, uri, s3.Endpoint(cfg.endpoint, access, secret, cfg.region))
    else:
        state_dir = Path(cfg.dir).absolute()
        store = Store(cfg, uri, s3.Endpoint("", RGW_ACCESS_KEY, RGW_SECRET_KEY, cfg.region))
        store.lock_key = os.path.realpath(state_dir)
        locks.acquire(store.lock_key, f"the object store in {state_dir}", exclusive=True)
        store.rgw = rgw.Rgw(
            state_dir, cfg.port, RGW_ACCESS_KEY, RGW_SECRET_KEY, cfg.capacity_gb, cfg.start_timeout_s
        )
    _active = store
    try:
        if store.rgw is not None:
            store.rgw.start()
            store.server = s3.Endpoint(store.rgw.endpoint, RGW_ACCESS_KEY, RGW_SECRET_KEY, cfg.region)
            store.version = _ceph_version()
        store.bucket_created = s3.ensure_bucket(store.server, store.bucket, create=cfg.create_bucket)
        if cfg.proxied:
            target = urlparse(store.server.url)
            plan = FaultPlan(**cfg.faults.model_dump()) if cfg.faults.active else None
            store.proxy = DelayProxy(
                target.hostname or "127.0.0.1", target.port or 80, cfg.latency_ms / 2, plan
            )
            store.proxy.start()
    except BaseException:
        store.close()
        raise
    storage.register_store(uri, store.lock_key or f"{store.server.url}/{store.bucket}")
    _stop_on_sigterm()
    return store


def close() -> None:
    """Stop the open store, if any (the end of a run; also registered to run at exit)."""
    if _active is not None:
        _active.close()


def _on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM while a store is open: stop it, then die of SIGTERM as the process would have."""
    close()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


def _stop_on_sigterm() -> None:
    # Only where SIGTERM would kill the process outright (its default): a handler someone else
    # installed (the measuring loop's "stop after this measurement") is left alone.
    if threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    ):
        signal.signal(signal.SIGTERM, _on_sigterm)


atexit.register(close)
run_state.register_outside_cause(outage_of)
