"""A ``hudi_spark.read`` DataFrame's own methods: collected to the driver as Arrow without the
JVM's rows, counted without reading its columns, filtered with core's pruning.

Spark collects a DataFrame to Arrow (``toArrow``, and ``toPandas`` with Arrow on) by turning its
rows into Arrow batches in the JVM and streaming those to the driver's Python. For a Hudi query
that is two conversions too many: the slices merged in Python tasks are Arrow already, and cross
into the JVM only to be made Arrow again. On a local master (``local[N]``, ``local-cluster``) the
driver shares the executors' machine, so :func:`collect_batches` lets each read task write its
rows as an Arrow IPC stream to a folder of the driver's, and the driver maps the streams in:
the same rows, as batches of the schema Spark's collection gives them, without a row in the JVM.

Spark counts such a DataFrame by merging every column of every slice in Python and moving the
rows into the JVM to count them (it cannot prune a ``mapInArrow``'s columns); :func:`count_rows`
has the read tasks read no column but the filters' and what a merge needs, and send one number
each. It needs no shared machine.

A Spark filter of the DataFrame reaches the JVM's parquet scans but not core's plan, so every
slice with log files is merged whatever the condition; ``filter``/``where`` plan the read again,
on its snapshot, with the filters :mod:`hudi_spark.pushdown` finds in the condition. Spark prunes
no column of a Python task either: ``select`` of columns by name, and an aggregate after
``groupBy``, plan the read again with the columns they use.

:func:`query_methods` gives a ``hudi_spark.read`` DataFrame those methods: ``_collect_as_arrow``
(the one path of ``toArrow`` and ``toPandas``) when the master is local and
``hoodie.spark.read.collect.local`` is on, ``count()`` when ``hoodie.spark.read.count.narrow`` is
on, ``filter``/``where`` when ``hoodie.spark.read.filter.pushdown`` is on. The read's ``filters``
are applied to the rows as Spark applies them where :func:`spark_filter` can say so, else the
collection and the count stay Spark's. A cached DataFrame collects, counts and filters from its
cache. The tasks read the file slices the DataFrame was planned with, as Spark's own actions
would; a DataFrame derived from it otherwise (a projection, a join) is Spark's own.
"""

from __future__ import annotations

import dataclasses
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

from hudi_spark.compat import arrow_schema, is_local, scala_items, spark_schema, to_arrow
from hudi_spark.options import ReadOptions

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from pyspark.sql import DataFrame, SparkSession

    from hudi_spark.reading import ReadSpec

#: a task's read of its splits: ``reading.read_slices`` (passed in: reading imports this module)
Reader = Callable[["ReadSpec", Sequence[Any], pa.Schema], Iterator[pa.RecordBatch]]

__all__ = ["Query", "collect_batches", "count_rows", "query_methods", "spark_filter"]

#: what each task reports: its input partition and the stream it wrote
_WRITTEN = pa.schema([("group", pa.int64()), ("file", pa.string())])
#: what each counting task reports
_COUNTED = pa.schema([("rows", pa.int64())])


@dataclasses.dataclass(frozen=True)
class Query:
    """A ``hudi_spark.read`` DataFrame's read, as its own methods need it."""

    spec: ReadSpec
    table: HudiTable  # opened on the driver: its timeline fixes the snapshot
    groups: list[list[Any]]  # the read's splits, packed as its tasks read them
    schema: pa.Schema  # their Arrow schema
    read: Reader
    filters: list[Any]  # core's, which the DataFrame applies as Spark's ``where``
    #: the same read planned again, on its snapshot, with other filters (and only some columns)
    refine: Callable[..., DataFrame]


@dataclasses.dataclass(frozen=True)
class _Methods:
    """Which of its own methods a read's DataFrame takes, and what they need."""

    query: Query
    keep: Callable[[pa.RecordBatch], pa.RecordBatch] | None  # the filters, as Spark applies them
    collect: bool  # toArrow/toPandas take the tasks' files
    count: bool  # count() reads no column but the filters' and the merge's
    pushdown: bool  # filter/where plan the read again with the filters core takes from them


def query_methods(df: DataFrame, query: Query) -> DataFrame:
    """``df``, the DataFrame of ``query``, with methods of its own where they apply: collected
    through :func:`collect_batches` (on a local master), counted through :func:`count_rows`, its
    ``filter``/``where`` planned again with the filters :func:`~hudi_spark.pushdown.condition_filters`
    takes from the condition; else ``df`` as it is."""
    options = HoodieConfig(query.spec.options)
    keep = spark_filter(query.filters, query.schema)
    local = is_local(str(df.sparkSession.sparkContext.master))
    collect = keep is not None and local and bool(options.get(ReadOptions.COLLECT_LOCAL))
    count = keep is not None and bool(options.get(ReadOptions.COUNT_NARROW))
    pushdown = bool(options.get(ReadOptions.FILTER_PUSHDOWN))
    if not (collect or count or pushdown):
        return df
    df.__class__ = _query_class(type(df))
    df._hudi_methods = _Methods(query, keep, collect, count, pushdown)  # type: ignore[attr-defined]
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
        if op in ("in", "not in") and not _holds(kind, values):
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


def _holds(kind: pa.DataType, values: list[Any]) -> bool:
    """Whether pyarrow holds every one of ``values`` in a column of ``kind`` (2**40 does not fit
    an int column, which Spark's comparison widens instead)."""
    try:
        pa.array(values).cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    return True


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


def _query_class(base: type) -> type:
    """``base`` (PySpark's DataFrame class) with :func:`_collect_as_arrow`, :func:`_count`,
    :func:`_filter`, :func:`_select` and :func:`_group_by` in place of its own."""
    if base not in _classes:
        overrides = {"_collect_as_arrow": _collect_as_arrow, "count": _count, "filter": _filter,
                     "where": _filter, "select": _select, "groupBy": _group_by, "groupby": _group_by}  # fmt: skip
        _classes[base] = type(base.__name__, (base,), overrides)
    return _classes[base]


def _count(self: Any) -> int:
    """PySpark's ``DataFrame.count()``, by :func:`count_rows`. A cached DataFrame counts as Spark
    does (``cache()`` then ``count()`` is how a cache is filled)."""
    from pyspark import StorageLevel

    methods = self._hudi_methods
    if not methods.count or self.storageLevel != StorageLevel.NONE:
        return super(type(self), self).count()  # type: ignore[no-any-return]
    return count_rows(self.sparkSession, methods.query, methods.keep)


def _filter(self: Any, condition: Any) -> DataFrame:
    """PySpark's ``DataFrame.filter`` (and ``where``), with core pruning by the condition: the
    read planned again on its snapshot with the filters core takes from the condition as Spark
    analyzed it, so that partitions and file slices they rule out are never merged. Where those
    filters say all of the condition, that read is the answer (a read's DataFrame, with its own
    methods); else Spark filters it by the whole condition. A cached DataFrame filters its
    cache."""
    from pyspark import StorageLevel

    from hudi_spark.pushdown import condition_filters

    derived = super(type(self), self).filter(condition)
    methods = self._hudi_methods
    if not methods.pushdown or self.storageLevel != StorageLevel.NONE:
        return derived  # type: ignore[no-any-return]
    analyzed = derived._jdf.queryExecution().analyzed()
    if analyzed.getClass().getSimpleName() != "Filter":
        return derived  # type: ignore[no-any-return]
    query = methods.query
    found, whole = condition_filters(analyzed.condition(), set(query.schema.names))
    if not found:
        return derived  # type: ignore[no-any-return]
    refined = query.refine([*query.filters, *found])
    return refined if whole else super(type(refined), refined).filter(condition)  # type: ignore[no-any-return]


def _select(self: Any, *cols: Any) -> DataFrame:
    """PySpark's ``DataFrame.select``; of columns of the read by name (each once, the filters'
    among them), the read planned again, on its snapshot, with those columns alone
    (``hoodie.datasource.read.columns``): the Python tasks decode no other column (Spark prunes
    its own parquet scans by itself, not a Python task's columns), and the answer is a read's
    DataFrame, with its own methods. A cached DataFrame selects from its cache."""
    from pyspark import StorageLevel

    derived = super(type(self), self).select(*cols)
    methods = self._hudi_methods
    names = list(cols[0]) if len(cols) == 1 and isinstance(cols[0], (list, tuple)) else list(cols)
    query = methods.query
    known = set(query.schema.names)
    if (
        not methods.pushdown
        or self.storageLevel != StorageLevel.NONE
        or not names
        or not all(isinstance(n, str) and n in known for n in names)
        or len(set(names)) != len(names)
        or not {str(f[0]) for f in query.filters} <= set(names)
    ):
        return derived  # type: ignore[no-any-return]
    return query.refine(query.filters, names)


def _group_by(self: Any, *cols: Any) -> Any:
    """PySpark's ``DataFrame.groupBy``, whose aggregates (``agg``, ``count``, ``sum``, ``avg``,
    ``mean``, ``min``, ``max``) read the read's columns they use alone: the aggregate is built as
    Spark builds it, its input columns taken from Spark's analysis, and built again over the read
    planned with those columns (:func:`_select`), so the Python tasks decode no other column.
    Where that cannot be done (a column bound to this DataFrame, a cached DataFrame) the aggregate
    is Spark's."""
    from pyspark import StorageLevel

    grouped = super(type(self), self).groupBy(*cols)
    if not self._hudi_methods.pushdown or self.storageLevel != StorageLevel.NONE:
        return grouped
    grouped.__class__ = _grouped_class(type(grouped))
    grouped._hudi_read = (self, cols)
    return grouped


#: GroupedData's aggregates that _group_by narrows
_AGGREGATES = ("agg", "count", "sum", "avg", "mean", "min", "max")
_grouped_classes: dict[type, type] = {}


def _grouped_class(base: type) -> type:
    """``base`` (PySpark's GroupedData class) with :data:`_AGGREGATES` on the read's columns they use."""
    if base not in _grouped_classes:
        overrides = {name: _narrowed_aggregate(name) for name in _AGGREGATES}
        _grouped_classes[base] = type(base.__name__, (base,), overrides)
    return _grouped_classes[base]


def _narrowed_aggregate(name: str) -> Callable[..., DataFrame]:
    def aggregate(self: Any, *args: Any, **kwargs: Any) -> DataFrame:
        from pyspark.errors import AnalysisException

        result: DataFrame = getattr(super(type(self), self), name)(*args, **kwargs)
        read, cols = self._hudi_read
        if _bound_to_read(result, [*cols, *args, *kwargs.values()]):
            return result
        query = read._hudi_methods.query
        used = _references(result._jdf.queryExecution().analyzed())
        filtered = [str(f[0]) for f in query.filters]
        needed = [n for n in query.schema.names if n in used or n in filtered]
        if not used <= set(query.schema.names) or len(needed) >= len(query.schema.names):
            return result
        try:
            return getattr(read.select(*needed).groupBy(*cols), name)(*args, **kwargs)  # type: ignore[no-any-return]
        except AnalysisException:  # a reference to ``read`` that _bound_to_read did not see
            return result

    aggregate.__name__ = name
    return aggregate


def _bound_to_read(result: DataFrame, arguments: list[Any]) -> bool:
    """Whether an aggregate's ``arguments`` (of ``groupBy`` and the aggregate) hold a column bound
    to the read (``read.city``, ``read["ts"]``), which means nothing over the read planned again:
    Spark resolved it against the read before analysis, so it is a resolved reference of the
    aggregate's logical plan. Columns named as text to the aggregate (``max("ts")``, a dict's
    keys) resolve there too, so a resolved reference of such a name, or a call without Column
    arguments, is not taken for one (a bound column of the same name is left to the analysis)."""
    from pyspark.sql import Column

    def flat(values: Any) -> Iterator[Any]:
        for v in values:
            if isinstance(v, (list, tuple)):
                yield from flat(v)
            else:
                yield from (map(str, v) if isinstance(v, dict) else [v])

    given = list(flat(arguments))
    if not any(isinstance(v, Column) for v in given):
        return False
    texts = {v for v in given if isinstance(v, str)}
    refs = scala_items(result._jdf.queryExecution().logical().references().iterator())
    return any(ref.resolved() and str(ref.name()) not in texts for ref in refs)


def _references(plan: Any) -> set[str]:
    """The names of the input columns an analyzed plan's top node uses (an Aggregate's grouping
    and aggregate expressions)."""
    return {str(ref.name()) for ref in scala_items(plan.references().iterator())}


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

    methods = self._hudi_methods
    if not methods.collect or methods.keep is None or self.storageLevel != StorageLevel.NONE:
        return spark_collection()
    given = {**dict(zip(_PARAMETERS, args, strict=False)), **kwargs}
    tz = self.sparkSession.conf.get("spark.sql.session.timeZone", None) or "UTC"
    target = arrow_schema(self.schema, timezone=tz, large_types=bool(given.get("prefers_large_var_types")))
    q = methods.query
    read_back = collect_batches(self.sparkSession, q.spec, q.groups, q.schema, q.read)
    batches = [methods.keep(b).cast(target) for b in read_back]
    if batches or given.get("empty_list_if_zero_records", True):
        return batches
    return [pa.RecordBatch.from_arrays([pa.array([], f.type) for f in target], schema=target)]


def collect_batches(
    spark: SparkSession, spec: ReadSpec, groups: Sequence[Sequence[Any]], schema: pa.Schema, read: Reader
) -> list[pa.RecordBatch]:
    """The rows of ``groups`` (core's read splits, one Spark task per group, read by ``read``) as
    Arrow batches of ``schema`` on the driver, in the groups' order: each task writes its rows,
    batch by batch, as an Arrow IPC stream into a temporary folder in the application's scratch
    folder, and the driver maps the streams into its memory, then deletes the folder. Needs the
    driver on the executors' machine (a local master).

    The batches are the streams' pages, which the tasks' writes left in the page cache: mapped,
    not copied into fresh memory (1.25M rows of the trips table, ~300 MB: the driver's page faults
    85-93k -> 1.1-1.3k, ``toArrow`` on ``local[2]`` 0.81-0.96 s -> 0.67-0.80 s, and with every
    buffer touched after it 0.90-1.09 s -> 0.76-0.92 s: a mapped page comes 16 at a time). A
    deleted file's pages stay readable while mapped; its disk space in ``spark.local.dir`` is
    freed when the batches are."""
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
        for path in written.column("file").to_pylist():
            with pa.memory_map(path) as f:
                batches += pa.ipc.open_stream(f).read_all().to_batches()
        return batches
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def count_rows(spark: SparkSession, query: Query, keep: Callable[[pa.RecordBatch], pa.RecordBatch]) -> int:
    """The number of rows of ``query`` that ``keep`` keeps (its filters, as Spark applies them):
    each task reads its splits by ``query.read`` for the filters' columns alone (core's
    :func:`~hudi_core.read.projected_splits`: the merge still reads the keys, ordering and delete
    columns) and gives Spark one number."""
    from hudi_core.read import projected_splits

    if not query.groups:
        return 0
    columns = list(dict.fromkeys(str(column) for column, _, _ in query.filters))
    flat = iter(projected_splits(query.table.config, [s for g in query.groups for s in g], columns))
    narrow = [[next(flat) for _ in g] for g in query.groups]
    schema = pa.schema([query.schema.field(c) for c in columns])
    task = functools.partial(
        _count_task, spec=query.spec, groups=narrow, schema=schema, read=query.read, keep=keep
    )
    seeds = spark.range(0, len(narrow), 1, len(narrow))
    counted = to_arrow(seeds.mapInArrow(task, spark_schema(_COUNTED)))
    return int(pc.sum(counted.column("rows")).as_py() or 0)


def _count_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec, groups: list[list[Any]], schema: pa.Schema,
                read: Reader, keep: Callable[[pa.RecordBatch], pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for seed in seeds:
        for i in seed.column(0).to_pylist():
            n = sum(keep(b).num_rows for b in read(spec, groups[i], schema))
            yield pa.RecordBatch.from_arrays([pa.array([n], pa.int64())], schema=_COUNTED)


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
