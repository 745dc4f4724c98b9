"""``spark_session()``: a SparkSession with the settings hudi-spark expects.

The settings come from the PySpark probe on this project's machines: Python workers must run the
driver's interpreter (else they lack pyarrow), the session time zone must be ``UTC`` (not
``Etc/UTC``, which breaks ``applyInArrow``), Arrow must not silently fall back to pickled rows.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FAST_CONF", "REQUIRED_CONF", "prepare_environment", "spark_session"]

#: settings without which the pipeline misbehaves (kept on any session we build)
REQUIRED_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    # 100k rows per Arrow batch: fewer JVM<->Python round trips; see benchmarks/spark_bench.py
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
}

#: small-machine settings: quick start-up, few shuffle partitions, no UI
FAST_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    **REQUIRED_CONF,
}


def prepare_environment() -> None:
    """Make executors' Python workers use this interpreter and keep Spark on loopback."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def spark_session(
    master: str = "local[2]",
    *,
    app_name: str = "hudi-py",
    conf: Mapping[str, Any] | None = None,
    fast: bool = True,
    log_level: str = "ERROR",
) -> SparkSession:
    """Get or create a SparkSession for hudi-py and register the ``hudi`` data source.

    >>> spark = spark_session("local[2]", conf={"spark.local.dir": "/tmp/spark"})  # doctest: +SKIP
    """
    prepare_environment()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(FAST_CONF if fast else REQUIRED_CONF)
    if master.startswith("local-cluster"):
        # executors are separate JVMs: they need the interpreter too
        settings["spark.executorEnv.PYSPARK_PYTHON"] = sys.executable
        settings["spark.executorEnv.SPARK_LOCAL_IP"] = "127.0.0.1"
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    from hudi_spark.datasource import register

    register(session)
    return session
