"""What differs between PySpark 3.5 and 4.x, in one place.

PySpark 3.5 has no Python Data Source API (``pyspark.sql.datasource``: ``format("hudi")``), no
``DataFrame.toArrow``, no scalar ``arrow_udf`` and no ``cogroup().applyInArrow``; the write
pipeline's ``mapInArrow`` stages and ``foreachBatch`` streaming are the same on both. Everything
else in hudi_spark asks here instead of testing versions itself.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "arrow_schema",
    "has_arrow_udf",
    "has_cogroup_arrow",
    "has_data_source_api",
    "pyspark_version",
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


def arrow_schema(schema: StructType) -> pa.Schema:
    """A Spark schema as Arrow, timestamps in UTC (3.5's converter takes no time zone: UTC too)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    if pyspark_version() >= (4, 0):
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


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
