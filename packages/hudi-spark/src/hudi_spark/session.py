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

from hudi_spark.compat import is_local

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "FAST_CONF",
    "LOCAL_CONF",
    "REQUIRED_CONF",
    "is_local",
    "prepare_environment",
    "session_settings",
    "spark_session",
]

#: settings without which the pipeline misbehaves (kept on any session we build)
REQUIRED_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    # 100k rows per Arrow batch: fewer JVM<->Python round trips; see benchmarks/spark_bench.py
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
}

#: a local master's driver listens on loopback only: no network needed, nothing exposed
#: (never for a cluster master, whose executors must reach the driver)
LOCAL_CONF: dict[str, str] = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}

#: the JVM options of a quick start: the C1 JIT only and the serial collector
_QUICK_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"

#: quick start on a small machine (the tests, the demo): no UI, few shuffle partitions, AQE off,
#: and :data:`_QUICK_JVM` in the driver and in executor JVMs (a local-cluster test: 62 -> 45 CPU
#: seconds), which start faster but run the JVM side of a large Arrow hop ~2x slower;
#: ``spark_session(fast=False)`` keeps Spark's own defaults for real jobs
FAST_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.driver.extraJavaOptions": _QUICK_JVM,
    "spark.executor.extraJavaOptions": _QUICK_JVM,
    **REQUIRED_CONF,
}


def prepare_environment(master: str = "local") -> None:
    """Make executors' Python workers use this interpreter; keep a local master on loopback."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def session_settings(
    master: str, conf: Mapping[str, Any] | None = None, *, fast: bool = True
) -> dict[str, str]:
    """The settings :func:`spark_session` gives a session on ``master`` (``conf`` wins)."""
    settings = dict(FAST_CONF if fast else REQUIRED_CONF)
    if is_local(master):
        settings.update(LOCAL_CONF)
    if master.startswith("local-cluster"):
        # executors are separate JVMs: they need the interpreter too
        settings["spark.executorEnv.PYSPARK_PYTHON"] = sys.executable
        settings["spark.executorEnv.SPARK_LOCAL_IP"] = "127.0.0.1"
    settings.update({k: str(v) for k, v in (conf or {}).items()})
    return settings


def spark_session(
    master: str = "local[2]",
    *,
    app_name: str = "hudi-py",
    conf: Mapping[str, Any] | None = None,
    fast: bool = True,
    log_level: str = "ERROR",
) -> SparkSession:
    """Get or create a SparkSession for hudi-py and register the ``hudi`` data source (PySpark 4).

    ``fast`` adds :data:`FAST_CONF` (quick start on a small machine; pass False for throughput on
    large inputs); a local master's driver listens on loopback only (:data:`LOCAL_CONF`).

    >>> spark = spark_session("local[2]", conf={"spark.local.dir": "/tmp/spark"})  # doctest: +SKIP
    """
    prepare_environment(master)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in session_settings(master, conf, fast=fast).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(log_level)
    from hudi_spark.compat import has_data_source_api

    if has_data_source_api():  # PySpark 3.5 has no Python data sources: hudi_spark.read reads
        from hudi_spark.datasource import register

        register(session)
    return session
