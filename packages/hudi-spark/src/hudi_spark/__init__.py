"""The Spark engine for hudi-py: the write pipeline distributed on PySpark (batch and Structured
Streaming), ``hudi_spark.read``, and ``format("hudi")``: batch loads and saves as ``hudi_spark.read``
and ``hudi_spark.write`` once this package is imported (PySpark 3.5 and 4), PySpark 4's Python
data source otherwise (and for streams).

>>> import hudi_spark
>>> spark = hudi_spark.spark_session("local[2]")          # doctest: +SKIP
>>> hudi_spark.write(df, "/data/trips", operation="upsert", options={...})  # doctest: +SKIP
>>> spark.read.format("hudi").load("/data/trips")       # doctest: +SKIP
>>> hudi_spark.read(spark, "/data/trips")                # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hudi_spark.format_hudi import install as _install_format
from hudi_spark.session import spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__version__ = "0.1.0"

__all__ = ["__version__", "read", "register", "spark_session", "write", "write_stream"]


def register(spark: SparkSession) -> None:
    """Register the ``hudi`` data source on ``spark`` (optional on PySpark 4, which finds it by
    itself). On PySpark 3.5, which has no Python data sources, there is nothing to register:
    importing ``hudi_spark`` already made ``spark.read.format("hudi").load(path)`` and
    ``df.write.format("hudi").save(path)`` :func:`read` and :func:`write` (not
    ``readStream``/``writeStream``: use :func:`write_stream`)."""
    from hudi_spark.compat import has_data_source_api

    if not has_data_source_api():
        return
    from hudi_spark.datasource import register as _register

    _register(spark)


def read(
    spark: SparkSession,
    path: str,
    options: Mapping[str, Any] | None = None,
    *,
    filters: Sequence[tuple[str, str, Any]] | None = None,
) -> DataFrame:
    """The table at ``path`` as a DataFrame, on PySpark 3.5 and 4: the rows and options of
    ``spark.read.format("hudi").options(**options).load(path)`` (snapshot, read_optimized,
    incremental, ``as.of.instant``, ``hoodie.datasource.read.columns``), faster: file slices
    with nothing to merge are read by Spark's own parquet reader in the JVM (column pruning and
    filters in the files included), only slices with log files are merged in Python tasks.
    ``filters`` (``(column, op, value)``, ANDed, as ``HudiTable.read``'s) prune partitions before
    any file is read and filter the rows; so do the DataFrame's own ``filter``/``where`` (what
    core can take of the condition), and its ``select`` of columns by name reads those alone.

    >>> hudi_spark.read(spark, "/data/trips", {"hoodie.datasource.query.type": "incremental",
    ...     "hoodie.datasource.read.begin.instanttime": "20240101000000000"})  # doctest: +SKIP
    """
    from hudi_spark.reading import read_dataframe

    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    return read_dataframe(spark, path, opts, filters=filters)


def write(*args: Any, **kwargs: Any) -> Any:
    """See :func:`hudi_spark.writer.write`."""
    from hudi_spark.writer import write as _write

    return _write(*args, **kwargs)


def write_stream(*args: Any, **kwargs: Any) -> Any:
    """See :func:`hudi_spark.streaming.write_stream`."""
    from hudi_spark.streaming import write_stream as _write_stream

    return _write_stream(*args, **kwargs)


def _register_on_active_session() -> None:
    # Importing hudi_spark in a running PySpark 4 session makes format("hudi") available at once.
    import sys

    if "pyspark" not in sys.modules:
        return
    try:
        from pyspark.sql import SparkSession

        from hudi_spark.compat import has_data_source_api

        active = SparkSession.getActiveSession()
        if active is not None and has_data_source_api():
            register(active)
    except Exception:  # pragma: no cover - never fail an import over a convenience
        pass


_register_on_active_session()
# spark.read.format("hudi").load(path) and df.write.format("hudi").save(path): hudi_spark.read and write
_install_format(read, write)
