"""What differs between PySpark 3.5 and 4.x, in one place.

PySpark 3.5 has no Python Data Source API (``pyspark.sql.datasource``: ``format("hudi")``), no
``DataFrame.toArrow``, no scalar ``arrow_udf`` and no ``cogroup().applyInArrow``; the write
pipeline's ``mapInArrow`` stages and ``foreachBatch`` streaming are the same on both. Everything
else in hudi_spark asks here instead of testing versions itself. Also here: the session settings
a write holds while it runs (``setting``, :func:`batches_bounded_by_rows`).
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "arrow_schema",
    "batches_bounded_by_rows",
    "has_arrow_udf",
    "has_cogroup_arrow",
    "has_data_source_api",
    "pyspark_version",
    "scala_items",
    "setting",
    "spark_schema",
    "to_arrow",
]


@functools.cache
def pyspark_version() -> tuple[int, int]:
    """``(major, minor)`` of the PySpark imported (a pip install or ``$SPARK_HOME/python``)."""
    import pyspark

    major, minor = re.findall(r"\d+", pyspark.__version__)[:2]
    return int(major), int(minor)


def has_data_source_api() -> bool:
    """PySpark 4.0+: ``spark.read.format("hudi")`` / ``df.write.format("hudi")`` can be ours."""
    return pyspark_version() >= (4, 0)


def has_arrow_udf() -> bool:
    """PySpark 4.1+: scalar Arrow UDFs (``pyspark.sql.functions.arrow_udf``)."""
    from pyspark.sql import functions

    return hasattr(functions, "arrow_udf")


def has_cogroup_arrow() -> bool:
    """PySpark 4.0+: ``groupBy().cogroup().applyInArrow`` (3.5 has only ``applyInPandas``)."""
    from pyspark.sql.pandas.group_ops import PandasCogroupedOps

    return hasattr(PandasCogroupedOps, "applyInArrow")


def arrow_schema(schema: StructType, *, timezone: str = "UTC", large_types: bool = False) -> pa.Schema:
    """A Spark schema as Arrow, timestamps in ``timezone`` and text and binary as Arrow's large
    types with ``large_types``, as PySpark 4 converts them (3.5's converter takes neither: UTC and
    the plain types, which its ``toPandas`` converts the same)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if pyspark_version() >= (4, 0):
        return to_arrow_schema(schema, timezone=timezone, prefers_large_types=large_types)
    return to_arrow_schema(schema)


def is_local(master: str) -> bool:
    """``local``, ``local[N]``, ``local[N,F]`` or ``local-cluster[...]``: everything on this machine."""
    return master == "local" or master.startswith(("local[", "local-cluster["))


def scala_items(iterator: Any) -> Iterator[Any]:
    """The items of a Scala iterator reached through py4j (Spark 3.5's Scala 2.12 and 4's 2.13
    alike), one ``hasNext``/``next`` pair each."""
    while iterator.hasNext():
        yield iterator.next()


def spark_schema(schema: pa.Schema) -> StructType:
    """An Arrow schema as Spark's."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def to_arrow(df: DataFrame) -> pa.Table:
    """``df`` collected to the driver as one Arrow table (``toArrow`` from PySpark 4.0; on 3.5
    the same Arrow collection that ``toPandas`` uses, without pandas)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    legacy: Any = df  # PySpark 3.5: no toArrow; its DataFrame's own Arrow collection
    batches: list[Any] = legacy._collect_as_arrow()
    if not batches:
        return arrow_schema(df.schema).empty_table()
    return pa.Table.from_batches(batches)


#: Spark 4's bound on the bytes of an Arrow batch the JVM sends to Python (64 MB by default)
MAX_BYTES_PER_BATCH = "spark.sql.execution.arrow.maxBytesPerBatch"
MAX_RECORDS_PER_BATCH = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: the byte bound at which Spark skips measuring batches (Int.MaxValue exactly)
_NO_BYTE_BOUND = 2**31 - 1
#: the bytes of a batch that the row bound keeps to, by Spark's estimate of a row's width
_BATCH_BYTES = 64 << 20
_bounds_lock = threading.Lock()
_bounds: dict[int, tuple[int, dict[str, str | None]]] = {}


@contextlib.contextmanager
def batches_bounded_by_rows(df: DataFrame) -> Iterator[None]:
    """While the block runs, the JVM cuts the Arrow batches it sends to Python workers by rows
    only (``maxRecordsPerBatch``), as Spark 3.5 does. Spark 4's byte bound
    (``maxBytesPerBatch``, 64 MB by default) measures the batch's Arrow vectors after every row
    it appends: 40% of the JVM's CPU in a 1M-row ``mapInArrow`` of the trips rows (1.1-1.3 s ->
    0.65-0.78 s on ``local[2]``). The row bound is lowered where Spark's estimate of ``df``'s row
    width (``StructType.defaultSize``: 20 bytes a string) would put more than 64 MB in a batch.
    A session that set the byte bound itself keeps it; the session's settings come back when the
    last of its blocks in this process ends."""
    spark = df.sparkSession
    managed = _bound_rows(spark, max(1024, _BATCH_BYTES // _row_width(df)))
    try:
        yield
    finally:
        if managed:
            _release_rows(spark)


def _bound_rows(spark: Any, fit: int) -> bool:
    """Enter a block of :func:`batches_bounded_by_rows` on ``spark`` with at most ``fit`` rows a
    batch; False where the session keeps its own byte bound (or Spark has none)."""
    key = id(spark)
    with _bounds_lock:
        count, saved = _bounds.get(key, (0, {}))
        if count == 0:
            if pyspark_version() < (4, 0) or spark.conf.get(MAX_BYTES_PER_BATCH, None) is not None:
                return False
            saved = {k: spark.conf.get(k, None) for k in (MAX_BYTES_PER_BATCH, MAX_RECORDS_PER_BATCH)}
            spark.conf.set(MAX_BYTES_PER_BATCH, str(_NO_BYTE_BOUND))
        # (a concurrent block's row bound is lowered for a wider df, never raised)
        rows = int(spark.conf.get(MAX_RECORDS_PER_BATCH, None) or 10_000)  # (unset: Spark's default)
        if rows <= 0 or rows > fit:
            spark.conf.set(MAX_RECORDS_PER_BATCH, str(fit))
        _bounds[key] = (count + 1, saved)
        return True


def _release_rows(spark: Any) -> None:
    """Leave a block of :func:`_bound_rows`; the last one gives the session its settings back."""
    key = id(spark)
    with _bounds_lock:
        count, saved = _bounds.pop(key)
        if count > 1:
            _bounds[key] = (count - 1, saved)
            return
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def _row_width(df: DataFrame) -> int:
    """Spark's estimate of a row's bytes (``StructType.defaultSize``); without the JVM's plan (a
    Spark Connect DataFrame), 20 bytes a top-level column, Spark's size of a string."""
    try:
        return max(1, int(df._jdf.schema().defaultSize()))
    except Exception:
        return max(1, 20 * len(df.columns))


@contextlib.contextmanager
def setting(spark: Any, key: str, value: str, *, unless_set: bool = False) -> Iterator[None]:
    """``key`` set to ``value`` in ``spark``'s session while the block runs; then the session's
    own value back, or none if it had none. ``unless_set``: a value the session set itself is
    kept, and the block runs with it."""
    given = spark.conf.get(key, None)
    if unless_set and given is not None:
        yield
        return
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if given is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, given)
