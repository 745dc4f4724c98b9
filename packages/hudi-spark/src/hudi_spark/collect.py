"""A ``hudi_spark.read`` DataFrame collected to the driver as Arrow without the JVM's rows.

Spark collects a DataFrame to Arrow (``toArrow``, and ``toPandas`` with Arrow on) by turning its
rows into Arrow batches in the JVM and streaming those to the driver's Python. For a Hudi query
that is two conversions too many: the slices merged in Python tasks are Arrow already, and cross
into the JVM only to be made Arrow again. On a local master (``local[N]``, ``local-cluster``) the
driver shares the executors' machine, so :func:`collect_batches` lets each read task write its
rows as an Arrow IPC stream to a folder of the driver's, and the driver reads the streams back:
the same rows, as batches of the schema Spark's collection gives them, without a row in the JVM.

:func:`local_collect` gives a ``hudi_spark.read`` DataFrame that collection (its
``_collect_as_arrow``, the one path of ``toArrow`` and ``toPandas``) when the master is local,
``hoodie.spark.read.collect.local`` is on, and the read has no ``filters`` (Spark's comparisons
and core's differ on NaN and NOT IN, so a filtered read keeps Spark's collection); a cached
DataFrame collects from its cache. The tasks read the file slices the DataFrame was planned with,
as Spark's collection would; a DataFrame derived from it (a filter, a projection, a join) is
Spark's own and collects as Spark does.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig

from hudi_spark.compat import is_local, spark_schema, to_arrow
from hudi_spark.options import ReadOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hudi_spark.reading import ReadSpec

#: a task's read of its splits: ``reading.read_slices`` (passed in: reading imports this module)
Reader = Callable[["ReadSpec", Sequence[Any], pa.Schema], Iterator[pa.RecordBatch]]

__all__ = ["collect_batches", "local_collect"]

#: what each task reports: its input partition and the stream it wrote
_WRITTEN = pa.schema([("group", pa.int64()), ("file", pa.string())])


def local_collect(
    df: DataFrame, spec: ReadSpec, groups: list[list[Any]], schema: pa.Schema, read: Reader
) -> DataFrame:
    """``df`` collected through :func:`collect_batches` (``groups``: the read's splits packed as
    its tasks read them, by ``read``; ``schema``: their Arrow schema), where that applies; else
    ``df``."""
    local = is_local(str(df.sparkSession.sparkContext.master))
    if not local or not HoodieConfig(spec.options).get(ReadOptions.COLLECT_LOCAL):
        return df
    df.__class__ = _collecting_class(type(df))
    df._hudi_collect = (spec, groups, schema, read)  # type: ignore[attr-defined]
    return df


_classes: dict[type, type] = {}


def _collecting_class(base: type) -> type:
    """``base`` (PySpark's DataFrame class) with :func:`_collect_as_arrow` in place of its own."""
    if base not in _classes:
        _classes[base] = type(base.__name__, (base,), {"_collect_as_arrow": _collect_as_arrow})
    return _classes[base]


#: ``_collect_as_arrow``'s parameters on PySpark 4 (3.5 has the first only)
_PARAMETERS = ("split_batches", "empty_list_if_zero_records", "prefers_large_var_types")


def _collect_as_arrow(self: Any, *args: Any, **kwargs: Any) -> list[pa.RecordBatch]:
    """PySpark's ``DataFrame._collect_as_arrow`` (``toArrow``, ``toPandas``), by files: the batches
    in the Arrow types Spark's collection gives (``to_arrow_schema`` of the DataFrame's schema).
    A cached DataFrame collects as Spark does, from its cache (which outlives the files a cleaner
    may have deleted since)."""
    from pyspark import StorageLevel

    if self.storageLevel != StorageLevel.NONE:
        return super(type(self), self)._collect_as_arrow(*args, **kwargs)  # type: ignore[no-any-return]
    given = {**dict(zip(_PARAMETERS, args, strict=False)), **kwargs}
    spec, groups, schema, read = self._hudi_collect
    target = _spark_arrow_schema(self, bool(given.get("prefers_large_var_types", False)))
    batches = [b.cast(target) for b in collect_batches(self.sparkSession, spec, groups, schema, read)]
    if batches or given.get("empty_list_if_zero_records", True):
        return batches
    return [pa.RecordBatch.from_arrays([pa.array([], f.type) for f in target], schema=target)]


def _spark_arrow_schema(df: Any, large_types: bool) -> pa.Schema:
    """The Arrow schema of Spark's collection of ``df``: timestamps in the session's time zone,
    as the JVM sends them (PySpark 3.5's ``to_arrow_schema`` takes no keywords: UTC, which
    ``toPandas`` converts the same)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    tz = df.sparkSession.conf.get("spark.sql.session.timeZone", None)
    try:
        return to_arrow_schema(df.schema, timezone=tz, prefers_large_types=large_types)
    except TypeError:  # PySpark 3.5
        return to_arrow_schema(df.schema)


def collect_batches(
    spark: SparkSession, spec: ReadSpec, groups: Sequence[Sequence[Any]], schema: pa.Schema, read: Reader
) -> list[pa.RecordBatch]:
    """The rows of ``groups`` (core's read splits, one Spark task per group, read by ``read``) as
    Arrow batches of ``schema`` on the driver, in the groups' order: each task writes its rows,
    batch by batch, as an Arrow IPC stream into a temporary folder in the application's scratch
    folder, and the driver reads the streams into memory, then deletes the folder. Needs the
    driver on the executors' machine (a local master)."""
    from hudi_core.engine.pool import arrow_pool

    if not groups:
        return []
    folder = tempfile.mkdtemp(prefix="hudi-spark-collect-", dir=_scratch())
    try:
        task = functools.partial(
            _write_task, spec=spec, groups=[list(g) for g in groups], schema=schema, read=read, folder=folder
        )
        seeds = spark.range(0, len(groups), 1, len(groups))
        written = to_arrow(seeds.mapInArrow(task, spark_schema(_WRITTEN))).sort_by("group")
        batches: list[pa.RecordBatch] = []
        with arrow_pool():
            for path in written.column("file").to_pylist():
                with pa.OSFile(path) as f:
                    batches += pa.ipc.open_stream(f).read_all().to_batches()
        return batches
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _scratch() -> str | None:
    """The driver's scratch folder of this Spark application (``SparkFiles``' root, under
    ``spark.local.dir``): Spark deletes it when the driver's JVM exits, so a driver stopped during
    a collection leaves no streams behind."""
    from pyspark import SparkFiles

    try:
        root = SparkFiles.getRootDirectory()
    except Exception:  # no active SparkContext's folder to give: the system's temporary folder
        return None
    return root if os.path.isdir(root) else None


def _write_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec, groups: list[list[Any]], schema: pa.Schema,
                read: Reader, folder: str) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for seed in seeds:
        for i in seed.column(0).to_pylist():
            # a retried or speculative attempt writes a stream of its own; the driver reads the
            # one whose task Spark kept
            path = os.path.join(folder, f"{i}-{uuid.uuid4().hex}.arrows")
            with pa.OSFile(path, "wb") as f, pa.ipc.new_stream(f, schema) as out:
                for batch in read(spec, groups[i], schema):
                    out.write_batch(batch)
            yield pa.RecordBatch.from_pylist([{"group": i, "file": path}], schema=_WRITTEN)
