"""Checks for tests of ``hudi_spark.read`` DataFrames: :func:`checked_collect`, and the pytest
fixture over it that a conftest imports by name (``from hudi_spark.testing import collected``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

__all__ = ["checked_collect", "collected"]


def checked_collect(df: Any) -> pa.Table:
    """Spark's own collection of ``df`` to Arrow (its rows through the JVM: the rows of Spark's
    parquet scans among them), checked against ``toArrow``/``_collect_as_arrow`` and ``count()``
    of the DataFrame itself, which for a ``hudi_spark.read`` DataFrame take the read tasks'
    Arrow files (on a local master, every slice read in Python) and count in the read tasks
    (``hudi_spark.collect``): the same schema, rows and count, or AssertionError."""
    from hudi_spark.compat import to_arrow

    spark_side = to_arrow(df.select("*"))  # a DataFrame of Spark's own class
    direct = to_arrow(df)
    assert direct.schema == spark_side.schema, f"{direct.schema}\n!=\n{spark_side.schema}"
    assert _rows(direct) == _rows(spark_side), "toArrow's rows are not Spark's collection's"
    counted = df.count()
    assert counted == spark_side.num_rows, f"count() {counted}, Spark's collection {spark_side.num_rows} rows"
    return spark_side


@pytest.fixture
def collected() -> Callable[[Any], pa.Table]:
    """:func:`checked_collect`."""
    return checked_collect


def _rows(t: pa.Table) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in r.values()) for r in t.to_pylist())
