"""Fixtures shared by the cross-package tests."""

from __future__ import annotations

import sys
from pathlib import Path

from hudi_core.testing.fixtures import compat_root, corpus_copy
from hudi_core.testing.s3 import moto_s3_server, s3_bucket

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools" / "minihdfs"))

from minihdfs import hdfs_root

__all__ = ["compat_root", "corpus_copy", "hdfs_root", "moto_s3_server", "s3_bucket"]
