"""One SparkSession for the whole test session (JVM start-up is ~10 s on this machine).

Every Spark test is marked ``spark`` and ``xdist_group("spark")`` so that, under
``pytest -n 2 --dist loadgroup``, all of them share a single worker and a single JVM.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hudi_core.testing.fixtures import compat_root, corpus_copy, mimalloc_default

__all__ = ["compat_root", "corpus_copy", "mimalloc_default", "spark"]

SPARK = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from hudi_spark.session import spark_session

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    local_dir = tmp_path_factory.mktemp(f"spark-local-{worker}")
    conf = {
        "spark.local.dir": str(local_dir),
        "spark.sql.warehouse.dir": str(local_dir / "warehouse"),
    }
    if extra := os.environ.get("SPARK_TEST_EXTRA_JAVA"):  # e.g. AppCDS flags built by CI
        conf["spark.driver.extraJavaOptions"] = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 " + extra
    # local[2,2]: two cores and up to two attempts per task, so a test can inject one failure
    session = spark_session(
        os.environ.get("SPARK_TEST_MASTER", "local[2,2]"), app_name=f"hudi-tests-{worker}", conf=conf
    )
    yield session
    session.stop()
