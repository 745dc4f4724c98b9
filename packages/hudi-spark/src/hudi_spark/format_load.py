"""``spark.read.format("hudi").load(path)`` as :func:`hudi_spark.read`, in a driver that imported
``hudi_spark``, on PySpark 3.5 and 4.

A Python data source (PySpark 4's ``format("hudi")``, :mod:`hudi_spark.datasource`) can hand
Spark no JVM scan and learns nothing of the columns a query uses, so every file slice is read in
Python tasks and every column crosses into the JVM, for a ``count()`` too. ``hudi_spark.read``
gives the same rows for the same options with the slices that have nothing to merge read by
Spark's own parquet reader, and its DataFrame's ``count``, ``filter``/``where``, ``select`` and
``toArrow`` planned into the read (:mod:`hudi_spark.collect`). Importing ``hudi_spark`` wraps
PySpark's ``DataFrameReader.load`` (:func:`install`): a batch load of the ``hudi`` format with one
path (or a ``path`` option) and no schema of the user's is that read, with the reader's options
as Spark holds them. Any other load is PySpark's own: other formats, a schema given with
``.schema()``, several paths, ``hoodie.spark.read.format.fast=false`` (the data source), and
Spark Connect's reader (another class). ``spark.readStream`` is not a ``DataFrameReader``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hudi_core.config.property import HoodieConfig

from hudi_spark.options import ReadOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["hudi_load", "install"]

#: the format names the wrapped load answers for (as ``format()`` takes them: any case)
FORMAT = "hudi"
#: set on the wrapping function, so that a second install leaves it alone
_MARK = "__hudi_spark_load__"


#: ``hudi_spark.read(spark, path, options)``
Read = Callable[[Any, str, dict[str, str]], "DataFrame"]


def install(read: Read) -> None:
    """Wrap ``pyspark.sql.readwriter.DataFrameReader.load`` (once per process) so that a load of
    the ``hudi`` format returns :func:`hudi_load`'s DataFrame, read by ``read``
    (``hudi_spark.read``), where it gives one."""
    from pyspark.sql.readwriter import DataFrameReader

    if getattr(DataFrameReader.load, _MARK, False):
        return
    spark_load = DataFrameReader.load

    @functools.wraps(spark_load)
    def load(
        self: Any, path: Any = None, format: str | None = None, schema: Any = None, **options: Any
    ) -> Any:
        # as PySpark's own load: the arguments first go to the reader, which then holds them all
        if format is not None:
            self.format(format)
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        df = hudi_load(self, path, read)
        return df if df is not None else spark_load(self, path)

    setattr(load, _MARK, True)
    DataFrameReader.load = load  # type: ignore[method-assign]


def hudi_load(reader: Any, path: Any, read: Read) -> DataFrame | None:
    """``read`` (:func:`hudi_spark.read`) of what ``reader`` (a classic ``DataFrameReader`` whose format,
    schema and options are set) was asked to load from ``path``, or None where it does not
    apply (not the ``hudi`` format, a schema of the user's, not one path, or the option off)."""
    jreader = reader._jreader
    if str(jreader.source()).lower() != FORMAT or not jreader.userSpecifiedSchema().isEmpty():
        return None
    options = _options(jreader)
    given = {k.lower(): k for k in options}
    if isinstance(path, (list, tuple)) and len(path) == 1:
        path = path[0]
    if path is None and "path" in given:
        path = options[given["path"]]
    if not isinstance(path, str) or not path:
        return None
    options = {k: v for k, v in options.items() if k.lower() != "path"}
    if not HoodieConfig({k.lower(): v for k, v in options.items()}).get(ReadOptions.FORMAT_FAST):
        return None
    return read(reader._spark, path, options)


def _options(jreader: Any) -> dict[str, str]:
    """The reader's options with the keys as the user wrote them (Spark's case-insensitive map
    keeps them in ``originalMap``; a Scala map, read through its iterator on 2.12 and 2.13)."""
    entries = jreader.extraOptions().originalMap().iterator()
    options: dict[str, str] = {}
    while entries.hasNext():
        entry = entries.next()
        options[str(entry._1())] = str(entry._2())
    return options
