"""The Spark engine for hudi-py: the write pipeline distributed on PySpark (batch and Structured
Streaming), and ``spark.read.format("hudi")``.

>>> import hudi_spark
>>> spark = hudi_spark.spark_session("local[2]")          # doctest: +SKIP
>>> hudi_spark.write(df, "/data/trips", operation="upsert", options={...})  # doctest: +SKIP
>>> spark.read.format("hudi").load("/data/trips")       # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hudi_spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__version__ = "0.1.0"

__all__ = ["__version__", "register", "spark_session", "write", "write_stream"]


def register(spark: SparkSession) -> None:
    """Register the ``hudi`` data source on ``spark``."""
    from hudi_spark.datasource import register as _register

    _register(spark)


def write(*args: Any, **kwargs: Any) -> Any:
    """See :func:`hudi_spark.writer.write`."""
    from hudi_spark.writer import write as _write

    return _write(*args, **kwargs)


def write_stream(*args: Any, **kwargs: Any) -> Any:
    """See :func:`hudi_spark.streaming.write_stream`."""
    from hudi_spark.streaming import write_stream as _write_stream

    return _write_stream(*args, **kwargs)


def _register_on_active_session() -> None:
    # Importing hudi_spark in a running session makes format("hudi") available at once.
    import sys

    if "pyspark" not in sys.modules:
        return
    try:
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is not None:
            register(active)
    except Exception:  # pragma: no cover - never fail an import over a convenience
        pass


_register_on_active_session()
