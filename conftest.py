"""The order the whole suite's tests are handed out in: tests marked ``slow`` first; and the
class-data archive every Spark JVM of the run starts from (``tests/tools/jvm_cds.py``).

Each tier runs on two xdist workers, which take tests in collection order. A long test collected
late ran while the other worker, out of tests, sat idle (the first tier's last ~40 s were one
worker's S3 stress test). Handed out first, the long tests run beside the short ones, which then
fill in around them. The sort is stable: each group keeps its order, a module marked ``slow``
stays together, and a module with a few ``slow`` tests is split in two (none of those has a
module-scoped fixture, which would then be set up twice). And the ``hdfs_root`` fixture
(``tests/tools/minihdfs``) for the tests of every tier that use HDFS."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "tests" / "tools"))
sys.path.insert(0, str(Path(__file__).parent / "tests" / "tools" / "minihdfs"))

from jvm_cds import java_options
from minihdfs import hdfs_root  # the HDFS mini cluster of every tier's HDFS tests

__all__ = ["hdfs_root"]


def pytest_configure(config: pytest.Config) -> None:
    """Every Spark driver the run starts (sessions, ``spark-submit`` and command-line runs in
    subprocesses, in any xdist worker: they inherit the controller's environment) maps the class
    archive of this interpreter's PySpark, after the options already in ``SPARK_SUBMIT_OPTS``
    (unless those name an archive). The controller makes the archive before any worker starts."""
    submit = os.environ.get("SPARK_SUBMIT_OPTS", "")
    if "-XX:SharedArchiveFile" not in submit and not hasattr(config, "workerinput"):
        options = java_options()
        if options:
            os.environ["SPARK_SUBMIT_OPTS"] = f"{submit} {options}".strip()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
