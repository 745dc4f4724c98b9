"""The HDFS the HDFS tests use (``hdfs_root``, from ``tests/tools/minihdfs``): the cluster
``HUDI_TEST_HDFS_URI`` names, else a mini cluster on loopback started for this test session."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "tests" / "tools" / "minihdfs"))

from minihdfs import hdfs_root

__all__ = ["hdfs_root"]
