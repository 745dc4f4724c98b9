"""One SparkSession per test process (JVM start-up is ~10 s on this machine).

Every Spark test is marked ``spark`` and ``xdist_group("spark")``: under ``pytest -n 2 --dist
loadgroup`` beside other tests (tox), all of them share a single worker and a single JVM. ``make
test`` runs the Spark tier alone with ``-n 2 --dist load``: two workers, a session each (the tier
waits on many small jobs and on spark-submit subprocesses: 356-447 s against 564 s in one
process on 2 cores).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hudi_core.testing.fixtures import compat_root, corpus_copy, mimalloc_default
from hudi_core.testing.s3 import moto_s3_server, s3_bucket
from hudi_spark.session import FAST_CONF
from hudi_spark.testing import collected

__all__ = [
    "collected",
    "compat_root",
    "corpus_copy",
    "mimalloc_default",
    "moto_s3_server",
    "s3_bucket",
    "spark",
]

SPARK = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

# Every Spark driver a test starts as a subprocess (spark-submit, the pyspark shell, a plain
# PySpark job, hudi-py streamer) runs with the JVM options spark_session() gives the session's
# own driver: C1 only and the serial collector. Each runs small jobs for seconds, where C2's
# compilations cost more CPU than they buy (a plain job's test: 30-35 -> 25 CPU seconds; this tier
# 747 -> 641-703 CPU seconds, 385 -> 342-374 s on 2 cores, one run each). The launcher reads
# SPARK_SUBMIT_OPTS; they go before what the run set there (the caller's options, whose flags
# then win, and the root conftest's class archive).
_SUBMIT = os.environ.get("SPARK_SUBMIT_OPTS", "")
if FAST_CONF["spark.driver.extraJavaOptions"] not in _SUBMIT:
    os.environ["SPARK_SUBMIT_OPTS"] = f"{FAST_CONF['spark.driver.extraJavaOptions']} {_SUBMIT}".strip()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the ``spark`` fixture is a Spark test, marked or not (the Apache Hudi
    tier's own marker aside): it runs in the Spark tier, never in an xdist worker of the ``not
    spark`` tier (there, a worker that used HDFS forks the JVM's launcher, and the child hangs in
    fsspec's after-fork handler)."""
    for item in items:
        marked = any(item.get_closest_marker(m) is not None for m in ("spark", "interop"))
        if "spark" in getattr(item, "fixturenames", ()) and not marked:
            for mark in SPARK:
                item.add_marker(mark)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from hudi_spark.session import spark_session

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    local_dir = tmp_path_factory.mktemp(f"spark-local-{worker}")
    conf = {
        "spark.local.dir": str(local_dir),
        "spark.sql.warehouse.dir": str(local_dir / "warehouse"),
    }
    # local[2,2]: two cores and up to two attempts per task, so a test can inject one failure
    session = spark_session(
        os.environ.get("SPARK_TEST_MASTER", "local[2,2]"), app_name=f"hudi-tests-{worker}", conf=conf
    )
    yield session
    session.stop()
