"""The few S3 calls icelab makes itself: before Spark starts, is the endpoint there, do the
credentials work, does the bucket exist (create it if not); and the one-request uploads of a
metadata state staged on local disk (`put_object`). AWS Signature Version 4 over the standard
library, so no SDK is needed and a bad endpoint or key fails in one line, not in a Java stack
trace.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
import re
import time
from dataclasses import dataclass
from urllib.parse import quote, urlparse

from icelab.core.errors import UserError

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
# What an S3 server says when the key is unknown or the signature does not match.
CREDENTIAL_CODES = ("InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken")
# What S3 answers when a request may succeed if sent again (InternalError, SlowDown).
RETRIED = (500, 503)
# A SigV4 signature names a region; this is S3's own default, used when none is configured.
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True)
class Endpoint:
    """An S3 endpoint and the credentials to sign with."""

    url: str
    access_key: str
    secret_key: str
    region: str = DEFAULT_REGION

    @property
    def host(self) -> str:
        return urlparse(self.url).netloc

    @property
    def secure(self) -> bool:
        return urlparse(self.url).scheme == "https"


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signed_headers(
    ep: Endpoint, method: str, path: str, now: dt.datetime | None = None, payload_sha256: str = EMPTY_SHA256
) -> dict[str, str]:
    """Headers of a SigV4-signed request (path-style: /bucket[/key]) whose body has the SHA-256
    `payload_sha256` (hex; an empty body's by default)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    headers = {"host": ep.host, "x-amz-content-sha256": payload_sha256, "x-amz-date": stamp}
    names = ";".join(sorted(headers))
    canonical = "\n".join(
        [method, quote(path, safe="/-_.~"), "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", names]
    )
    scope = f"{day}/{ep.region}/s3/aws4_request"
    digest = hashlib.sha256(f"{canonical}\n{payload_sha256}".encode()).hexdigest()
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, digest])
    key = _sign(f"AWS4{ep.secret_key}".encode(), day)
    for part in (ep.region, "s3", "aws4_request"):
        key = _sign(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={ep.access_key}/{scope}, SignedHeaders={names}, Signature={signature}"
    )
    return headers


def request(ep: Endpoint, method: str, path: str, timeout_s: float = 10.0) -> tuple[int, str]:
    """One signed request; (status, body).

    Raises:
        UserError: when the endpoint cannot be reached.
    """
    conn = connect(ep, timeout_s)
    try:
        conn.request(method, path, headers=signed_headers(ep, method, path))
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as exc:
        raise unreachable(ep, exc) from None
    finally:
        conn.close()


def unreachable(ep: Endpoint, exc: BaseException) -> UserError:
    """The one-line error for an endpoint a request could not reach."""
    return UserError(f"storage endpoint {ep.url} is unreachable ({exc}); check storage.endpoint")


def connect(ep: Endpoint, timeout_s: float = 30.0) -> http.client.HTTPConnection:
    """A connection to the endpoint, to keep alive over several requests (`put_object`)."""
    cls = http.client.HTTPSConnection if ep.secure else http.client.HTTPConnection
    return cls(ep.host, timeout=timeout_s)


def put_object(
    conn: http.client.HTTPConnection, ep: Endpoint, path: str, body: bytes, retries: int = 0
) -> int:
    """PUT `body` at `path` (path-style: /bucket/key) in one signed request over `conn`.

    Args:
        retries: how many times to send it again when the store answers 500 or 503 (S3's "try
            again": SlowDown, InternalError), after 0.1 s, then twice as long each time.

    Returns:
        How many of the requests were answered 500 or 503 and sent again.

    Raises:
        UserError: when the store refuses it (status and error code) or cannot be reached.
    """
    digest = hashlib.sha256(body).hexdigest()
    for attempt in range(retries + 1):
        headers = signed_headers(ep, "PUT", path, payload_sha256=digest)
        headers["content-length"] = str(len(body))
        try:
            conn.request("PUT", quote(path, safe="/-_.~"), body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read().decode(errors="replace")
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise unreachable(ep, exc) from None
        if response.status == 200:
            return attempt
        if response.status not in RETRIED or attempt == retries:
            break
        time.sleep(0.1 * 2**attempt)
    raise UserError(f"storage endpoint {ep.url}: PUT {path} answered {response.status} {error_code(answer)}")


def error_code(body: str) -> str:
    """The <Code> of an S3 error document ('' when there is none)."""
    match = re.search(r"<Code>([^<]+)</Code>", body)
    return match.group(1) if match else ""


def ensure_bucket(ep: Endpoint, bucket: str, create: bool = True) -> bool:
    """Check the endpoint and credentials on `bucket`; create it when missing and `create`.

    Returns:
        Whether the bucket was created.

    Raises:
        UserError: unreachable endpoint, refused credentials, missing bucket (not created), or
            any other refusal, each in one line.
    """
    status, body = request(ep, "GET", f"/{bucket}")  # a HEAD answer has no error code to read
    code = error_code(body)
    if status in (401, 403) or code in CREDENTIAL_CODES:
        raise UserError(
            f"storage endpoint {ep.url} refused the credentials for bucket '{bucket}' "
            f"({status} {code or 'Forbidden'}); check the access and secret keys"
        )
    if status == 200:
        return False
    if status == 404 and code in ("NoSuchBucket", "") and create:
        status, body = request(ep, "PUT", f"/{bucket}")
        if status == 200:
            return True
        code = error_code(body)
    elif status == 404:
        raise UserError(
            f"storage endpoint {ep.url} has no bucket '{bucket}'; create it, or storage.create_bucket=true"
        )
    raise UserError(f"storage endpoint {ep.url}: bucket '{bucket}' answered {status} {code}".rstrip())
