"""Bounded retries with exponential back-off for transient S3 errors.

botocore's and s3fs's own retry loops are switched off (see ``S3Storage``) so this is the one
place that decides: 5xx answers, throttling codes and dropped connections are retried, anything
else (404, 403, 412...) is raised at once.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from hudi_core.errors import StorageError

__all__ = ["RetryPolicy", "TransientS3Error", "is_transient"]

log = logging.getLogger("hudi_storage_s3")

T = TypeVar("T")

_THROTTLING_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
        "TooManyRequests",
        "RequestTimeout",
        "InternalError",
        "ServiceUnavailable",
    }
)
_CONNECTION_ERRNOS = frozenset(
    {errno.ECONNRESET, errno.ECONNREFUSED, errno.ECONNABORTED, errno.EPIPE, errno.ETIMEDOUT}
)


class TransientS3Error(StorageError):
    """An S3 request kept failing with transient errors after every allowed retry."""


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 10:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def is_transient(exc: BaseException) -> bool:
    """True for errors worth retrying: HTTP 5xx, throttling, connection resets and timeouts."""
    for e in _chain(exc):
        if isinstance(e, (FileNotFoundError, FileExistsError, PermissionError)):
            return False
        response = getattr(e, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            return status >= 500 or status == 429 or code in _THROTTLING_CODES
        name = type(e).__name__
        module = type(e).__module__ or ""
        # botocore's HTTPClientError family (EndpointConnectionError, ConnectionClosedError,
        # ReadTimeoutError...) and aiohttp's client errors are all dropped/refused connections.
        if module.startswith(("botocore", "aiohttp")) and (
            "Connection" in name or "Timeout" in name or "HTTPClient" in name or "Payload" in name
            or "Disconnected" in name or "ClientOSError" in name
        ):  # fmt: skip
            return True
        if isinstance(e, (ConnectionError, socket.timeout, asyncio.TimeoutError, TimeoutError)):
            return True
        if isinstance(e, OSError) and e.errno in _CONNECTION_ERRNOS:
            return True
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` retries after the first attempt, waiting ``base_delay * 2**n`` (+-50%)."""

    max_retries: int = 4
    base_delay: float = 0.1
    max_delay: float = 5.0

    def call(self, what: str, fn: Callable[[], T], *, on_retry: Callable[[], None] | None = None) -> T:
        """Run ``fn``; retry transient failures. ``what`` names the operation in logs and errors
        (never credentials: callers pass an operation and a path only)."""
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as e:
                if not is_transient(e):
                    raise
                if attempt >= self.max_retries:
                    raise TransientS3Error(
                        f"{what} failed after {attempt + 1} attempts with transient errors "
                        f"(last: {type(e).__name__}: {e}); check the S3 endpoint's health or raise "
                        "hoodie.storage.s3.max.retries"
                    ) from e
                delay = min(self.max_delay, self.base_delay * (2**attempt))
                delay *= 0.5 + random.random()  # jitter: concurrent writers do not retry in lockstep
                log.warning(
                    "%s: transient error %s, retry %d/%d in %.2fs",
                    what, type(e).__name__, attempt + 1, self.max_retries, delay,
                )  # fmt: skip
                attempt += 1
                if on_retry is not None:
                    on_retry()
                time.sleep(delay)
