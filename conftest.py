"""The order the whole suite's tests are handed out in: tests marked ``slow`` first; and the
class-data archive every Spark JVM of the run starts from (``tests/tools/jvm_cds.py``).

Each tier runs on two xdist workers, which take tests in collection order. A long test collected
late ran while the other worker, out of tests, sat idle (the first tier's last ~40 s were one
worker's S3 stress test). Handed out first, the long tests run beside the short ones, which then
fill in around them. The sort is stable: each group keeps its order, a module marked ``slow``
stays together, and a module with a few ``slow`` tests is split in two (none of those has a
module-scoped fixture, which would then be set up twice)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "tests" / "tools"))

from jvm_cds import submit_args


def pytest_configure(config: pytest.Config) -> None:
    """Every PySpark driver the run starts (sessions, command-line runs in subprocesses, xdist
    workers) maps the class archive of this interpreter's PySpark, unless the caller set
    ``PYSPARK_SUBMIT_ARGS`` itself. The controller makes it before any worker starts."""
    if "PYSPARK_SUBMIT_ARGS" not in os.environ and not hasattr(config, "workerinput"):
        args = submit_args()
        if args:
            os.environ["PYSPARK_SUBMIT_ARGS"] = args


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
