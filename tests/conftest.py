"""Fixtures shared by the cross-package tests."""

from __future__ import annotations

from hudi_core.testing.fixtures import compat_root, corpus_copy
from hudi_core.testing.s3 import moto_s3_server, s3_bucket

__all__ = ["compat_root", "corpus_copy", "moto_s3_server", "s3_bucket"]
