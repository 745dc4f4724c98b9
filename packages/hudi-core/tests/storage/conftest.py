"""The HDFS the HDFS tests use: the cluster ``HUDI_TEST_HDFS_URI`` names, else a mini cluster on
loopback started for this test session (``tests/tools/minihdfs``; under xdist, one per worker that
runs an HDFS test). Never skipped: a cluster that cannot be had fails the tests with one line."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HDFS_URI_ENV = "HUDI_TEST_HDFS_URI"
_TOOLS = Path(__file__).resolve().parents[4] / "tests" / "tools" / "minihdfs"


@pytest.fixture(scope="session")
def hdfs_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sys.path.insert(0, str(_TOOLS))
    from minihdfs import MiniHdfsError, minihdfs, wait_for_namenode

    try:
        if named := os.environ.get(HDFS_URI_ENV):
            wait_for_namenode(named, timeout_s=10)
            yield named.rstrip("/")
            return
        with minihdfs(tmp_path_factory.mktemp("minihdfs")) as uri:
            yield f"{uri}/hudi-tests"
            return
    except MiniHdfsError as exc:
        error = str(exc)
    pytest.fail(f"HDFS mini cluster unavailable: {error}", pytrace=False)  # outside the except: one line
