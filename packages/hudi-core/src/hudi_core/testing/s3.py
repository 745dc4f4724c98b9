"""An in-process moto S3 server on loopback, and pytest fixtures over it.

Use from a ``conftest.py``::

    from hudi_core.testing.s3 import moto_s3_server, s3_bucket  # noqa: F401

``moto_s3_server`` (session scope) starts one ``ThreadedMotoServer`` on 127.0.0.1 and a free port
per test process, so every pytest-xdist worker has its own. It sets fake AWS credentials in the
environment for the session. ``s3_bucket`` wipes the server (``POST /moto-api/reset``) and creates
a fresh bucket for each test; ``s3_bucket.options`` are the table options that reach it.
``s3_endpoint_env`` also points the environment (``AWS_ENDPOINT_URL``) at the server, for code
that takes no options (the CLI, Spark tasks started from the test process).
Needs ``moto[s3]``, ``flask`` and ``flask-cors``.
"""

from __future__ import annotations

import http.client
import logging
import os
import socket
import threading
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

import pytest

__all__ = [
    "FAKE_AWS_ENV",
    "FlakyS3Proxy",
    "MotoS3Server",
    "Request",
    "S3Bucket",
    "free_port",
    "moto_s3_server",
    "s3_bucket",
    "s3_endpoint_env",
]

#: Fake credentials moto accepts; set in the environment before any client is created.
FAKE_AWS_ENV: dict[str, str] = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",  # never wait on the instance-metadata endpoint
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MotoS3Server:
    """moto's threaded S3 server on loopback.

    >>> with MotoS3Server() as server:  # doctest: +SKIP
    ...     server.create_bucket("lake")
    """

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self.region = "us-east-1"
        self._server: Any = None

    def start(self) -> MotoS3Server:
        from moto.server import ThreadedMotoServer

        # werkzeug logs every request at INFO, even with verbose=False.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> MotoS3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Drop every bucket and object."""
        req = urllib.request.Request(f"{self.endpoint_url}/moto-api/reset", method="POST", data=b"")
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()

    def client(self) -> Any:
        """A boto3 S3 client for this server (fake credentials)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        )

    def create_bucket(self, name: str) -> S3Bucket:
        self.client().create_bucket(Bucket=name)
        return S3Bucket(name=name, server=self)

    def options(self) -> dict[str, str]:
        """Table options that point hudi-py's S3 storage at this server."""
        return {
            "hoodie.storage.s3.endpoint": self.endpoint_url,
            "hoodie.storage.s3.region": self.region,
            "hoodie.storage.s3.access.key": FAKE_AWS_ENV["AWS_ACCESS_KEY_ID"],
            "hoodie.storage.s3.secret.key": FAKE_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
        }

    def env(self) -> dict[str, str]:
        """Environment variables that point any AWS client (and hudi-py) at this server."""
        return {**FAKE_AWS_ENV, "AWS_ENDPOINT_URL": self.endpoint_url}


@dataclass
class S3Bucket:
    """A bucket on the moto server: ``uri`` is ``s3://<name>``."""

    name: str
    server: MotoS3Server
    options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.options:
            self.options = self.server.options()

    @property
    def uri(self) -> str:
        return f"s3://{self.name}"

    def keys(self, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` (straight from S3, for assertions)."""
        client = self.server.client()
        out: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=prefix):
            out.extend(o["Key"] for o in page.get("Contents", []))
        return out


class Request(NamedTuple):
    """One request a :class:`FlakyS3Proxy` received."""

    method: str
    path: str  # without the query
    range: str | None  # the Range header
    #: a listing's prefix (None: not a listing)
    prefix: str | None = None


class FlakyS3Proxy:
    """A loopback HTTP proxy in front of an S3 endpoint that injects real network faults.

    ``fail(n, mode)`` makes the next ``n`` requests fail: ``"503"`` answers S3's ``SlowDown``
    error, ``"reset"`` closes the connection without an answer, ``"lost"`` forwards the request
    (so it takes effect) and then closes the connection (the client never learns it worked).
    ``seen`` lists every request received (:class:`Request`: its method, path, ``Range`` header
    and a listing's prefix), ``requests`` counts them. Point a client at ``endpoint_url``.
    """

    def __init__(self, target_endpoint: str) -> None:
        self._target = target_endpoint.removeprefix("http://").rstrip("/")
        self._lock = threading.Lock()
        self._faults: list[str] = []
        self.seen: list[Request] = []
        self.faults_served = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with proxy._lock:
                    path, _, query = self.path.partition("?")
                    q = urllib.parse.parse_qs(query, keep_blank_values=True)
                    listing = self.command == "GET" and "list-type" in q
                    prefix = q.get("prefix", [""])[0] if listing else None
                    proxy.seen.append(Request(self.command, path, self.headers.get("Range"), prefix))
                    fault = proxy._faults.pop(0) if proxy._faults else None
                    if fault:
                        proxy.faults_served += 1
                if fault == "503":
                    err = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(err)))
                    self.end_headers()
                    self.wfile.write(err)
                    return
                if fault == "reset":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                conn = http.client.HTTPConnection(proxy._target, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
                conn.close()
                if fault == "lost":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(resp.status)
                head = self.command == "HEAD"  # a HEAD answer keeps the object's real length
                for k, v in resp.getheaders():
                    if k.lower() in ("transfer-encoding", "connection"):
                        continue
                    if k.lower() == "content-length" and not head:
                        continue
                    self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if not head:
                    self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.endpoint_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.seen)

    def fail(self, n: int, mode: str = "503") -> None:
        if mode not in ("503", "reset", "lost"):
            raise ValueError(f"fault mode {mode!r} is not 503, reset or lost")
        with self._lock:
            self._faults.extend([mode] * n)

    def start(self) -> FlakyS3Proxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FlakyS3Proxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def moto_s3_server() -> Iterator[MotoS3Server]:
    """One moto S3 server per test process (so per xdist worker), fake AWS credentials in env."""
    saved = {k: os.environ.get(k) for k in FAKE_AWS_ENV}
    os.environ.update(FAKE_AWS_ENV)
    server = MotoS3Server().start()
    try:
        yield server
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def s3_bucket(moto_s3_server: MotoS3Server) -> S3Bucket:
    """A fresh bucket on a freshly reset server."""
    moto_s3_server.reset()
    return moto_s3_server.create_bucket(f"hudi-{uuid.uuid4().hex[:12]}")


@pytest.fixture
def s3_endpoint_env(s3_bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch) -> S3Bucket:
    """``s3_bucket``, with ``AWS_ENDPOINT_URL`` and fake credentials set for this test."""
    for k, v in s3_bucket.server.env().items():
        monkeypatch.setenv(k, v)
    return s3_bucket
