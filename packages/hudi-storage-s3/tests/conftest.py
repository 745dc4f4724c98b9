"""Fixtures: the shared moto S3 server (one per test process) and a fresh bucket per test."""

from __future__ import annotations

from hudi_core.testing.s3 import moto_s3_server, s3_bucket, s3_endpoint_env  # noqa: F401
