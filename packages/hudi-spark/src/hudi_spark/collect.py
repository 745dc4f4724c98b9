"""A ``hudi_spark.read`` DataFrame collected to the driver as Arrow without the JVM's rows.

Spark collects a DataFrame to Arrow (``toArrow``, and ``toPandas`` with Arrow on) by turning its
rows into Arrow batches in the JVM and streaming those to the driver's Python. For a Hudi query
that is two conversions too many: the slices merged in Python tasks are Arrow already, and cross
into the JVM only to be made Arrow again. On a local master (``local[N]``, ``local-cluster``) the
driver shares the executors' machine, so :func:`collect_batches` lets each read task write its
rows as an Arrow IPC stream to a folder of the driver's, and the driver reads the streams back:
the same rows, as batches of the schema Spark's collection gives them, without a row in the JVM.

:func:`local_collect` gives a ``hudi_spark.read`` DataFrame that collection (its
``_collect_as_arrow``, the one path of ``toArrow`` and ``toPandas``) when the master is local and
``hoodie.spark.read.collect.local`` is on; the read's ``filters`` are applied to the rows as Spark
applies them where :func:`spark_filter` can say so, else the collection stays Spark's. A cached
DataFrame collects from its cache. The tasks read the file slices the DataFrame was planned with,
as Spark's collection would; a DataFrame derived from it (a filter, a projection, a join) is
Spark's own and collects as Spark does.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig

from hudi_spark.compat import arrow_schema, is_local, spark_schema, to_arrow
from hudi_spark.options import ReadOptions

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from hudi_spark.reading import ReadSpec

#: a task's read of its splits: ``reading.read_slices`` (passed in: reading imports this module)
Reader = Callable[["ReadSpec", Sequence[Any], pa.Schema], Iterator[pa.RecordBatch]]

__all__ = ["collect_batches", "local_collect", "spark_filter"]

#: what each task reports: its input partition and the stream it wrote
_WRITTEN = pa.schema([("group", pa.int64()), ("file", pa.string())])


def local_collect(df: DataFrame, spec: ReadSpec, groups: list[list[Any]], schema: pa.Schema, read: Reader,
                  filters: Sequence[Any] | None = None) -> DataFrame:  # fmt: skip
    """``df`` collected through :func:`collect_batches` (``groups``: the read's splits packed as
    its tasks read them, by ``read``; ``schema``: their Arrow schema; ``filters``: core's, which
    ``df`` applies as Spark's ``where``), where that applies; else ``df``."""
    local = is_local(str(df.sparkSession.sparkContext.master))
    if not local or not HoodieConfig(spec.options).get(ReadOptions.COLLECT_LOCAL):
        return df
    keep = spark_filter(filters or [], schema)
    if keep is None:
        return df
    df.__class__ = _collecting_class(type(df))
    df._hudi_collect = (spec, groups, schema, read, keep)  # type: ignore[attr-defined]
    return df


#: core's comparisons as pyarrow's functions
_COMPARE = {"=": "equal", "==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal",
            ">": "greater", ">=": "greater_equal"}  # fmt: skip


def spark_filter(
    filters: Sequence[Any], schema: pa.Schema
) -> Callable[[pa.RecordBatch], pa.RecordBatch] | None:
    """A function keeping the rows of a batch that Spark's ``where`` of ``filters`` (core's
    ``(column, op, value)``, ANDed, as ``hudi_spark.read`` hands them to Spark) keeps; None where
    pyarrow's comparison could answer otherwise than Spark's: a floating point column (Spark
    orders NaN above every number and equal to itself), a timestamp (a naive value is read in the
    session's time zone), a nested column, a null among the values, or a value whose type is not
    the column's kind. Nulls are dropped as Spark drops them (``NOT IN`` included)."""
    checked = []
    for column, op, value in filters:
        op = str(op).strip().lower()
        values = list(value) if op in ("in", "not in") else [value]
        if schema.get_field_index(column) < 0 or (op not in _COMPARE and op not in ("in", "not in")):
            return None
        kind = schema.field(column).type
        if not values or not all(_plain(v, kind) for v in values):
            return None
        checked.append((column, op, values))

    def keep(batch: pa.RecordBatch) -> pa.RecordBatch:
        mask = None
        for column, op, values in checked:
            col = batch.column(column)
            if op in ("in", "not in"):
                hit = pc.is_in(col, value_set=pa.array(values).cast(col.type))
                m = hit if op == "in" else pc.and_(pc.invert(hit), pc.is_valid(col))
            else:
                m = getattr(pc, _COMPARE[op])(col, pa.scalar(values[0]))
            mask = m if mask is None else pc.and_(mask, m)
        return batch if mask is None else batch.filter(mask)

    return keep


def _plain(value: Any, kind: pa.DataType) -> bool:
    """``value`` compares with a column of ``kind`` in pyarrow as in Spark."""
    integer = isinstance(value, int) and not isinstance(value, bool)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return isinstance(value, str)
    if pa.types.is_integer(kind):
        return integer
    if pa.types.is_boolean(kind):
        return isinstance(value, bool)
    if pa.types.is_date32(kind):
        return type(value) is datetime.date
    if pa.types.is_decimal(kind):
        return integer or isinstance(value, decimal.Decimal)
    return False


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
    in the Arrow types Spark's collection gives (its schema's, timestamps in the session's time
    zone, as the JVM sends them). A cached DataFrame collects as Spark does, from its cache
    (which outlives the files a cleaner may have deleted since)."""
    from pyspark import StorageLevel

    def spark_collection() -> list[pa.RecordBatch]:
        return super(type(self), self)._collect_as_arrow(*args, **kwargs)  # type: ignore[no-any-return]

    if self.storageLevel != StorageLevel.NONE:
        return spark_collection()
    given = {**dict(zip(_PARAMETERS, args, strict=False)), **kwargs}
    spec, groups, schema, read, keep = self._hudi_collect
    tz = self.sparkSession.conf.get("spark.sql.session.timeZone", None) or "UTC"
    target = arrow_schema(self.schema, timezone=tz, large_types=bool(given.get("prefers_large_var_types")))
    read_back = collect_batches(self.sparkSession, spec, groups, schema, read)
    try:
        batches = [keep(b).cast(target) for b in read_back]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        # an IN value pyarrow cannot hold in the column's type (300 for a byte column): Spark's
        # comparison widens the column, so its collection answers
        return spark_collection()
    if batches or given.get("empty_list_if_zero_records", True):
        return batches
    return [pa.RecordBatch.from_arrays([pa.array([], f.type) for f in target], schema=target)]


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


def _scratch() -> str:
    """The driver's scratch folder of this Spark application (``SparkFiles``' root, under
    ``spark.local.dir``): Spark deletes it when the driver's JVM exits, so a driver stopped during
    a collection leaves no streams behind."""
    from pyspark import SparkFiles

    return SparkFiles.getRootDirectory()


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
