"""Reading a Hudi table on Spark, whatever the PySpark version: the read options resolved once
(:class:`ReadSpec`), the declared schema, core's read splits packed into Spark input partitions,
and :func:`read_in_tasks`, the read as a ``mapInArrow`` over one seed row per input partition.

``spark.read.format("hudi")`` (PySpark 4's Data Source API, :mod:`hudi_spark.datasource`) plans
and reads with the same functions, every file slice in Python workers. :func:`read_dataframe`
(``hudi_spark.read``, on 3.5 and 4) hands the file slices that need no merging (no log files,
or a read_optimized query) to Spark's own parquet reader, which stays in the JVM, prunes columns
and pushes filters into the files; only the slices with log files are merged in Python tasks.
Same options, same rows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError
from hudi_core.read.cdc import CDC_SCHEMA, IMAGES, changes_schema
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.timeline.instant import format_query_instant, format_range_instant

from hudi_spark.compat import setting, spark_schema
from hudi_spark.options import ReadOptions
from hudi_spark.stages import conform

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from hudi_core.timeline.timeline import ActiveTimeline
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ReadSpec",
    "group_slices",
    "jvm_readable",
    "jvm_scheme",
    "plan",
    "plan_groups",
    "read_dataframe",
    "read_in_tasks",
    "read_schema",
    "read_slices",
    "table_arrow_schema",
]  # fmt: skip

_QUERY_TYPES = ("snapshot", "read_optimized", "incremental")


@dataclass(frozen=True)
class ReadSpec:
    """What to read, resolved once on the driver from the reader options."""

    base_uri: str
    query_type: str
    as_of: str | None
    start: str | None
    end: str | None
    columns: tuple[str, ...] | None
    options: dict[str, str] = field(default_factory=dict)
    #: an incremental query's answer is the commits' changes (``incremental.format=cdc``)
    changes: bool = False
    #: their images: Hudi's JSON, or typed structs (``hoodie.spark.read.cdc.images``)
    images: str = "json"

    @classmethod
    def from_options(cls, options: Any) -> ReadSpec:
        opts = {str(k): str(v) for k, v in dict(options).items()}
        # the Data Source API lower-cases nothing but gives a case-insensitive dict; look up by lower key
        lower = {k.lower(): v for k, v in opts.items()}
        if "provider" in lower and "location" in lower:
            raise ConfigError(
                "CREATE TABLE ... USING hudi: Spark gives a Python data source none of a catalog table's "
                "options when it reads the table; use CREATE TEMPORARY VIEW <name> USING hudi OPTIONS "
                "(path '<base path>') or spark.read.format(\"hudi\").load(path).createOrReplaceTempView(...)"
            )
        base = lower.get("path")
        if not base:
            raise ConfigError(
                f'spark.read.format("hudi") needs a path: .load("<base path>") (options: {sorted(lower)})'
            )
        conf = HoodieConfig({k: v for k, v in opts.items() if k.lower() != "path"})
        qtype = str(lower.get(ReadOptions.QUERY_TYPE.key, ReadOptions.QUERY_TYPE.default)).lower()
        if qtype not in _QUERY_TYPES:
            raise ConfigError(
                f"{ReadOptions.QUERY_TYPE.key}={qtype!r} is not one of {', '.join(_QUERY_TYPES)}"
            )

        def instant(prop: Any, parse: Callable[..., str]) -> str | None:
            raw = lower.get(prop.key.lower())
            return parse(raw, option=prop.key) if raw else None

        # as Hudi: as.of.instant in its time-travel forms; begin/end compared as strings ("000")
        as_of, start, end = (
            instant(ReadOptions.AS_OF_INSTANT, format_query_instant),
            instant(ReadOptions.BEGIN_INSTANT, format_range_instant),
            instant(ReadOptions.END_INSTANT, format_range_instant),
        )
        if qtype == "incremental" and start is None:
            raise ConfigError(
                f"an incremental query needs {ReadOptions.BEGIN_INSTANT.key} (e.g. 000 for the beginning)"
            )
        cols = lower.get(ReadOptions.COLUMNS.key)
        columns = tuple(c.strip() for c in cols.split(",") if c.strip()) if cols else None
        fmt = str(
            lower.get(ReadOptions.INCREMENTAL_FORMAT.key, ReadOptions.INCREMENTAL_FORMAT.default)
        ).lower()
        if fmt not in ("latest_state", "cdc"):
            raise ConfigError(f"{ReadOptions.INCREMENTAL_FORMAT.key}={fmt!r} is not latest_state or cdc")
        # Hudi's batch reads take the option for incremental queries alone; its streaming source
        # whatever the query type: a read that names no query type is a CDC query (a stream's)
        changes = fmt == "cdc" and (qtype == "incremental" or ReadOptions.QUERY_TYPE.key not in lower)
        images = str(lower.get(ReadOptions.CDC_IMAGES.key, ReadOptions.CDC_IMAGES.default)).lower()
        if images not in IMAGES:
            raise ConfigError(f"{ReadOptions.CDC_IMAGES.key}={images!r} is not one of {', '.join(IMAGES)}")
        return cls(base, qtype, as_of, start, end, columns, dict(conf.items()), changes, images)

    def open_table(self) -> HudiTable:
        from hudi_core import HudiTable

        return HudiTable.open(self.base_uri, options=self.options)


def table_arrow_schema(table: HudiTable, as_of: str | None = None) -> pa.Schema:
    """Meta columns (unless the table does not populate them, as core's reader) then the
    table's columns, all nullable: the declared read schema."""
    from hudi_core.read import with_path_partition_columns

    data = table.schema(as_of)
    meta = META_FIELDS if table.config.populate_meta_fields else ()
    fields = [pa.field(name, pa.string()) for name in meta]
    if data is not None:
        fields += [f for f in data if f.name not in META_FIELDS]
    schema = with_path_partition_columns(table, pa.schema(fields))
    return pa.schema([f.with_nullable(True) for f in schema])


def group_slices(splits: Sequence[Any], split_bytes: int) -> list[list[Any]]:
    """Pack core's read splits (in order) into groups of at most ``split_bytes`` (a big one stays alone)."""
    groups: list[list[Any]] = []
    current: list[Any] = []
    size = 0
    for fs in splits:
        s = int(fs.size)
        if current and size + s > split_bytes:
            groups.append(current)
            current, size = [], 0
        current.append(fs)
        size += s
    if current:
        groups.append(current)
    return groups


def read_schema(spec: ReadSpec, table: HudiTable | None = None) -> pa.Schema:
    """The declared (Arrow) schema of a read: the table's at the query's instant, pruned to
    ``hoodie.datasource.read.columns`` when given (``table``: the table opened, else opened here)."""
    from hudi_core.read import incremental_schema_instant

    if spec.changes:
        return (
            CDC_SCHEMA if spec.images == "json" else changes_schema(table or spec.open_table(), spec.images)
        )
    table = table or spec.open_table()
    as_of = spec.as_of
    if spec.query_type == "incremental":
        as_of = incremental_schema_instant(table, table.timeline.completed_commits(), spec.start, spec.end)
    schema = table_arrow_schema(table, as_of)
    if spec.columns:
        missing = [c for c in spec.columns if c not in schema.names]
        if missing:
            raise ConfigError(f"columns {missing} are not in table {spec.base_uri} (columns: {schema.names})")
        schema = pa.schema([schema.field(c) for c in spec.columns])
    return schema


def plan(spec: ReadSpec, columns: Sequence[str], *, start: str | None = None, end: str | None = None,
         filters: Sequence[Any] | None = None, table: HudiTable | None = None) -> list[Any]:  # fmt: skip
    """Core's read splits of the query, one per file slice (merged across a pending compaction).
    ``start`` and ``end`` make it an incremental query over that range (a streaming micro-batch);
    ``filters`` (core's ``(column, op, value)``) prune partitions and filter the rows read.
    ``table``: the table opened, whose timeline (read once) fixes the snapshot; else opened here."""
    from hudi_core.read import plan_splits

    table = table or spec.open_table()
    cols = list(columns)
    if start is not None:
        return plan_splits(table, "incremental", None, start=start, end=end, columns=cols, filters=filters)
    as_of = None if spec.query_type == "incremental" else spec.as_of
    merge_type = str(HoodieConfig(spec.options).get(ReadOptions.MERGE_TYPE)).strip().lower()
    return plan_splits(table, spec.query_type, as_of, start=spec.start, end=spec.end, columns=cols,
                       filters=filters, merge_type=merge_type)  # fmt: skip


def plan_groups(spec: ReadSpec, columns: Sequence[str], *, start: str | None = None, end: str | None = None,
                filters: Sequence[Any] | None = None) -> list[list[Any]]:  # fmt: skip
    """:func:`plan`'s splits packed into Spark input partitions of at most
    ``hoodie.spark.read.split.bytes``."""
    return _groups(spec, plan(spec, columns, start=start, end=end, filters=filters))


def _pruning(filters: Sequence[Any], schema: pa.Schema) -> list[Any]:
    """The filters of ``hudi_spark.read(filters=)`` that core applies as Spark's ``where`` does,
    to prune and skip with: not those on a floating point column (Spark orders NaN above every
    number and equal to itself, where Arrow's comparisons and the files' statistics pass it for none),
    which Spark's ``where`` alone decides."""

    def floating(column: str) -> bool:
        i = schema.get_field_index(column)
        return i >= 0 and pa.types.is_floating(schema.field(i).type)

    return [f for f in filters if not floating(str(f[0]))]


def _groups(
    spec: ReadSpec, splits: Sequence[Any], cores: int = 1, *, of: Sequence[Any] | None = None
) -> list[list[Any]]:
    """Input partitions of at most ``hoodie.spark.read.split.bytes``, and (as Spark sizes its own
    file splits) of no more than an even share over ``cores`` tasks of the bytes of ``splits``
    (or of ``of``, the read they are part of)."""
    limit = int(HoodieConfig(spec.options).get(ReadOptions.SPLIT_SIZE))
    share = -(-sum(int(s.size) for s in (splits if of is None else of)) // max(1, cores))
    return group_slices(splits, max(1, min(limit, share)))


def read_slices(spec: ReadSpec, slices: Sequence[Any], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The rows of core's read splits (in a task), as batches of exactly ``schema`` (Spark
    compares names, types and nullability). Streamed (core's ``iter_split``): the task holds a
    slice's log records and ``hoodie.read.batch.rows`` rows of its base file, never the slice.
    Allocated from core's ``arrow_pool`` (jemalloc's): on the 1M-row trips table's warm reads a
    Python worker peaked at 288-300 MB against 319-357 MB from pyarrow's default (mimalloc)."""
    from hudi_core.engine.pool import arrow_pool
    from hudi_core.read import iter_split
    from hudi_core.read.parallel import batch_rows

    if not slices:
        return
    table = spec.open_table()
    rows = batch_rows(table.options)
    with arrow_pool():
        for split in slices:
            for data in iter_split(table, split, batch_rows=rows):
                yield from conform(data, schema).to_batches()


def read_changes(spec: ReadSpec, start: str | None, end: str | None) -> Iterator[pa.RecordBatch]:
    """The changes of the commits in ``(start, end]`` (core's ``read_changes``; in a task)."""
    yield from spec.open_table().read_changes(start or "000", end, images=spec.images).to_batches()


def _changes_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec) -> Iterator[pa.RecordBatch]:
    for _ in seeds:
        yield from read_changes(spec, spec.start, spec.end)


def _read_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec, groups: list[list[Any]],
               schema: pa.Schema) -> Iterator[pa.RecordBatch]:  # fmt: skip
    for seed in seeds:
        for i in seed.column(0).to_pylist():
            yield from read_slices(spec, groups[i], schema)


def read_in_tasks(spark: SparkSession, base_uri: str, options: dict[str, str]) -> DataFrame:
    """The read as Spark tasks without the Data Source API, every file slice in Python: planned
    here, on the driver, as ``format("hudi")`` plans it; one seed row per input partition, each
    task reads its partition's splits in ``mapInArrow``."""
    spec = ReadSpec.from_options({**options, "path": base_uri})
    schema = read_schema(spec)
    return _python_frame(spark, spec, plan_groups(spec, schema.names), schema)


def _python_frame(
    spark: SparkSession, spec: ReadSpec, groups: list[list[Any]], schema: pa.Schema
) -> DataFrame:
    if not groups:
        return spark.createDataFrame([], spark_schema(schema))
    seeds = spark.range(0, len(groups), 1, len(groups))  # one row, one task, per input partition
    task = functools.partial(_read_task, spec=spec, groups=groups, schema=schema)
    return seeds.mapInArrow(task, spark_schema(schema))


#: file systems Spark's own Hadoop client opens with no settings of ours
_JVM_SCHEMES = ("file", "hdfs")
#: an object store's names in a JVM's Hadoop, tried in order (:func:`jvm_scheme`): EMR's file
#: system serves ``s3://``, Hadoop's S3A connector ``s3a://``
_JVM_ALIASES = {"s3": ("s3", "s3a"), "s3a": ("s3a",)}
#: (application, scheme, bucket) -> the scheme Spark's JVM reads that bucket by, or None
_jvm_stores: dict[tuple[str, str, str], str | None] = {}
#: past this many paths Spark lists them in a Spark job of its own (a second or so on local[2])
_PARALLEL_LISTING = "spark.sql.sources.parallelPartitionDiscovery.threshold"
#: the base file and row of a base row read by Spark (its parquet reader's metadata columns)
_FILE, _ROW = "__hudi_spark_file", "__hudi_spark_row"
_DROPS = pa.schema([(_FILE, pa.string()), (_ROW, pa.int64())])


def read_dataframe(
    spark: SparkSession,
    base_uri: str,
    options: dict[str, str],
    filters: Sequence[Any] | None = None,
    *,
    table: HudiTable | None = None,
    timeline: ActiveTimeline | None = None,
) -> DataFrame:
    """``hudi_spark.read``: the query planned once on the driver; base files read by Spark's own
    parquet reader where :func:`jvm_readable` says it gives our answers. A file slice with
    nothing to merge is that base file. With ``hoodie.spark.read.jvm.delta``, one with log files
    is its base file without the rows the merge drops (a broadcast anti-join on file and row
    position) plus the rows the merge adds, both told by core's ``read_split_delta`` in Python
    tasks, which read only the key, ordering and delete columns of the base file. Other slices
    are merged whole in Python tasks (:func:`read_in_tasks`), a frame per partition whose
    partition columns Spark then knows (:func:`_python_frames`). One DataFrame, the union of those.

    ``filters`` (core's ``(column, op, value)``, ANDed) prune partitions and file slices for
    every path, and filter the rows (Spark pushes them into its parquet scans). ``table``: the
    table opened (else opened here); ``timeline``: its timeline as loaded for an earlier read,
    which then sees the same snapshot (else the timeline is loaded now).

    The DataFrame's own methods (:mod:`hudi_spark.collect`): ``toArrow``/``toPandas`` take the
    rows from the read tasks as Arrow files on a local master, ``count()`` counts in the read
    tasks without the columns, ``filter``/``where`` plan the read again, on the same snapshot,
    with the filters core can take from the condition, and ``select`` of columns by name with
    those columns alone."""
    spec = ReadSpec.from_options({**options, "path": base_uri})
    if spec.changes:  # a CDC query: one task reads the changes (core builds their JSON)
        task = functools.partial(_changes_task, spec=spec)
        return spark.range(0, 1, 1, 1).mapInArrow(task, spark_schema(read_schema(spec)))
    table = table or spec.open_table()
    with table.pinned_timeline(timeline) as timeline:
        schema = read_schema(spec, table)
        splits = plan(spec, schema.names, filters=_pruning(filters or [], schema), table=table)
        plain, merged = jvm_readable(spec, splits, schema, table, spark=spark)
    taken = {id(s) for s in (*plain, *merged)}
    rest = [s for s in splits if id(s) not in taken]
    # the Python merges first: Spark starts a stage's tasks in the order of the union's
    # partitions, so the long merge tasks start at once and the parquet scan's short tasks fill
    # the cores beside them (the 1M-row SIMPLE and BUCKET tables, alternating, medians of 9,
    # three sittings: count() 2-6% and groupBy 3-8% quicker, the noop scan the same; to Arrow,
    # whose driver takes the partitions in that order, 0-3% slower)
    frames = []
    if rest or not (plain or merged):
        frames += _python_frames(spark, spec, rest, schema)
    scheme = jvm_scheme(spark, spec.base_uri) if plain or merged else None  # (probed: cached)
    if merged:
        frames += _merged_in_jvm(spark, spec, merged, schema, scheme)
    if plain:
        frames.append(_parquet(spark, [_in_jvm(s.base_file.path, scheme) for s in plain], schema))
    df = functools.reduce(lambda a, b: a.union(b), frames)
    if filters:
        df = df.where(_condition(filters))
    from hudi_spark.collect import Query, query_methods

    def refine(filters: list[Any], columns: list[str] | None = None) -> DataFrame:
        opts = options if columns is None else {**options, ReadOptions.COLUMNS.key: ",".join(columns)}
        return read_dataframe(spark, base_uri, opts, filters, table=table, timeline=timeline)

    groups = _groups(spec, splits, _cores(spark))
    return query_methods(df, Query(spec, table, groups, schema, read_slices, list(filters or []), refine))


#: past this many partitions with slices to merge in Python, one frame merges them all (each frame
#: is a mapInArrow of its own, a union's branch: planning grows with their number)
_PARTITION_FRAMES = 64


def _python_frames(
    spark: SparkSession, spec: ReadSpec, splits: list[Any], schema: pa.Schema
) -> list[DataFrame]:
    """The slices merged in Python tasks, one frame per partition whose path tells the value
    every row holds in a string partition column (core's ``path_partition_values``): that frame
    gives the column as the literal, so a filter on the column in Spark (``df.filter("city =
    'x'")``) is decided when Spark plans the query, and the frames of the other partitions, with
    their merges, leave the plan. The other slices share one frame; all of them do when the
    partitions hold less than ``hoodie.spark.read.partition.frame.bytes`` on average (a frame's
    planning and task would cost more than pruning saves) or are more than 64."""
    from hudi_core.read import path_partition_values
    from pyspark.sql import functions as F

    by_partition: dict[str, list[Any]] = {}
    for s in splits:
        by_partition.setdefault(s.partition_path, []).append(s)
    cores = _cores(spark)
    per_partition = sum(int(s.size) for s in splits) / max(1, len(by_partition))
    small = per_partition < int(HoodieConfig(spec.options).get(ReadOptions.PARTITION_FRAME_BYTES))
    literals: dict[str, dict[str, str]] = {}
    if splits and not small and len(by_partition) <= _PARTITION_FRAMES:
        cfg = spec.open_table().config
        strings = {f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)}
        literals = {
            p: {k: v for k, v in path_partition_values(cfg, p).items() if k in strings} for p in by_partition
        }
    if not any(literals.values()):
        return [_python_frame(spark, spec, _groups(spec, splits, cores), schema)]
    frames, shared = [], []
    for partition, part_splits in by_partition.items():
        values = literals[partition]
        if not values:
            shared += part_splits
            continue
        # tasks sized by the whole read's share per core: a small partition stays one task
        frame = _python_frame(spark, spec, _groups(spec, part_splits, cores, of=splits), schema)
        # (withColumns replaces the columns in place: one call, where a select of every column
        # made a py4j call per column, 27 ms per frame)
        frames.append(frame.withColumns({n: F.lit(v) for n, v in values.items()}))
    if shared:
        frames.append(_python_frame(spark, spec, _groups(spec, shared, cores, of=splits), schema))
    return frames


def _condition(filters: Sequence[Any]) -> Any:
    """Core's filters as one Spark condition (the same comparisons, ANDed)."""
    import operator

    from pyspark.sql import functions as F

    compare = {"=": operator.eq, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
               "<=": operator.le, ">": operator.gt, ">=": operator.ge}  # fmt: skip
    cond = None
    for column, op, value in filters:
        c, op = F.col(column), str(op).strip().lower()
        if op in ("in", "not in"):
            e = c.isin(list(value)) if op == "in" else ~c.isin(list(value))
        else:
            e = compare[op](c, value)
        cond = e if cond is None else cond & e
    return cond


def _cores(spark: SparkSession) -> int:
    return int(spark.sparkContext.defaultParallelism)


def _parquet(spark: SparkSession, paths: list[str], schema: pa.Schema) -> DataFrame:
    reader = spark.read.schema(spark_schema(schema))
    if len(paths) <= int(spark.conf.get(_PARALLEL_LISTING, None) or 32):
        return reader.parquet(*paths)
    with setting(spark, _PARALLEL_LISTING, str(len(paths))):  # the driver lists the files it was given
        return reader.parquet(*paths)


def _merged_in_jvm(
    spark: SparkSession,
    spec: ReadSpec,
    splits: list[Any],
    schema: pa.Schema,
    scheme: str | None,
) -> list[DataFrame]:
    from pyspark.sql import functions as F

    groups = _groups(spec, splits, _cores(spark))
    seeds = spark.range(0, len(groups), 1, len(groups))
    drops = seeds.mapInArrow(functools.partial(_delta_task, spec=spec, groups=groups, schema=None),
                             spark_schema(_DROPS))  # fmt: skip
    base = _parquet(spark, [_in_jvm(s.base_file.path, scheme) for s in splits], schema).select(
        "*", F.col("_metadata.file_name").alias(_FILE), F.col("_metadata.row_index").alias(_ROW)
    )
    kept = base.join(F.broadcast(drops), [_FILE, _ROW], "left_anti").select(*schema.names)
    added = seeds.mapInArrow(functools.partial(_delta_task, spec=spec, groups=groups, schema=schema),
                             spark_schema(schema))  # fmt: skip
    return [kept, added]


def _delta_task(seeds: Iterator[pa.RecordBatch], *, spec: ReadSpec, groups: list[list[Any]],
                schema: pa.Schema | None) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """The dropped base rows (``schema`` None) or the added rows of each split's merge."""
    from hudi_core.read import read_split_delta

    table = spec.open_table()
    for seed in seeds:
        for i in seed.column(0).to_pylist():
            for split in groups[i]:
                delta = read_split_delta(table, split)
                assert delta is not None  # jvm_readable chose splits whose merge is told so
                dropped, added = delta
                if schema is not None:
                    if added.num_rows:
                        yield from conform(added, schema).to_batches()
                elif len(dropped):
                    name = pa.array([split.base_file.name] * len(dropped), pa.string())
                    yield pa.RecordBatch.from_arrays([name, pa.array(dropped, pa.int64())], schema=_DROPS)


def jvm_readable(
    spec: ReadSpec,
    splits: Sequence[Any],
    schema: pa.Schema,
    table: HudiTable | None = None,
    *,
    spark: SparkSession | None = None,
) -> tuple[list[Any], list[Any]]:
    """The splits whose base files Spark's own parquet reader reads with our answers: those with
    nothing to merge, and (``hoodie.spark.read.jvm.delta``) snapshot splits with log files whose
    merge core tells as a delta (every payload but partial updates). Only for a snapshot or
    read_optimized query of a table on local disk, on HDFS or (given ``spark``, with
    ``hoodie.spark.read.jvm.object.store``) on an object store that ``spark``'s JVM reads
    (:func:`jvm_scheme`), whose columns are all flat (nested
    types stay in Python: parquet-avro's list layouts), from files whose columns have exactly the
    query's types and names (a file written before a column's type was widened is merged in
    Python, which casts, and so is one written before Hudi's schema on read renamed a column, and
    a METADATA_ONLY bootstrap's skeleton; a column missing from a file is null on both paths).
    ``hoodie.spark.read.jvm.parquet=false`` reads everything in Python."""
    from hudi_core.read import tells_delta

    conf = HoodieConfig(spec.options)
    if spec.query_type not in ("snapshot", "read_optimized") or not conf.get(ReadOptions.JVM_PARQUET):
        return [], []
    if any(_nested(f.type) for f in schema):
        return [], []
    if _scheme(spec.base_uri) not in _JVM_SCHEMES and (
        spark is None
        or not conf.get(ReadOptions.JVM_OBJECT_STORE)
        or jvm_scheme(spark, spec.base_uri) is None
    ):
        return [], []
    table = table or spec.open_table()
    if table.config.drops_partition_columns:  # the partition columns come from the path: in Python
        return [], []
    delta = spec.query_type == "snapshot" and conf.get(ReadOptions.JVM_DELTA) and tells_delta(table)
    candidates = [s for s in splits if s.base_file is not None and (delta or not s.log_files)]
    # a file that holds columns under names Hudi's schema on read renamed since: matched by id
    # in Python
    candidates = [s for s in candidates if _by_name(s.context.history, s.base_file.instant)]
    # a bootstrap's skeleton holds the meta columns only: stitched to its source in Python
    candidates = [s for s in candidates if s.base_file.bootstrap_source is None]
    if not candidates:
        return [], []
    # one writer schema per commit: a footer per instant that wrote base files tells for all of them
    first_of: dict[str, str] = {}
    for s in candidates:
        first_of.setdefault(s.base_file.instant, s.base_file.path)
    with ThreadPoolExecutor(max_workers=min(8, len(first_of))) as pool:
        fits = dict(
            zip(first_of, pool.map(lambda p: _fits(table, p, schema), first_of.values()), strict=True)
        )
    readable = [s for s in candidates if fits[s.base_file.instant]]
    return [s for s in readable if not s.log_files], [s for s in readable if s.log_files]


def jvm_scheme(spark: SparkSession, base_uri: str) -> str | None:
    """The scheme Spark's JVM reads the table at ``base_uri`` by: local disk's and HDFS's own; on
    an object store the first of its names (``s3://``: ``s3``, then ``s3a``) that the JVM's Hadoop
    has a file system for and reads the table's ``.hoodie/hoodie.properties`` through, with the
    session's own Hadoop settings (its credentials and endpoint, not our storage options); None
    when no name does (a stock PySpark has no S3 connector). Probed once per application and
    bucket."""
    scheme = _scheme(base_uri)
    if scheme in _JVM_SCHEMES:
        return scheme
    rest = base_uri.split("://", 1)[1].rstrip("/")
    try:
        key = (spark.sparkContext.applicationId, scheme, rest.split("/", 1)[0])
    except Exception:  # a session with no JVM of its own here (Spark Connect)
        return None
    if key not in _jvm_stores:
        _jvm_stores[key] = next(
            (name for name in _JVM_ALIASES.get(scheme, (scheme,)) if _jvm_reads(spark, f"{name}://{rest}")),
            None,
        )
    return _jvm_stores[key]


def _jvm_reads(spark: SparkSession, base_uri: str) -> bool:
    from py4j.protocol import Py4JError

    jvm = spark._jvm
    if jvm is None:
        return False
    try:
        conf = spark._jsparkSession.sessionState().newHadoopConf()  # with the session's fs.* settings
        hadoop = jvm.org.apache.hadoop.fs
        hadoop.FileSystem.getFileSystemClass(base_uri.split("://", 1)[0], conf)  # no call to the store
        properties = hadoop.Path(f"{base_uri}/.hoodie/hoodie.properties")
        return bool(properties.getFileSystem(conf).exists(properties))
    except Py4JError:  # no file system for the scheme, or no access to the bucket
        return False


def _in_jvm(path: str, scheme: str | None) -> str:
    """Our URI of a file as the JVM's Hadoop names it under ``scheme`` (``s3://`` as ``s3a://``)."""
    return path if scheme is None or "://" not in path else f"{scheme}://{path.split('://', 1)[1]}"


def _scheme(uri: str) -> str:
    return uri.split("://", 1)[0].lower() if "://" in uri else "file"


def _by_name(history: Any, instant: str) -> bool:
    return history is None or history.file_columns(instant) is None


def _nested(dt: pa.DataType) -> bool:
    return pa.types.is_nested(dt) or pa.types.is_dictionary(dt)


def _fits(table: HudiTable, path: str, schema: pa.Schema) -> bool:
    import pyarrow.parquet as pq

    with table.storage.arrow_filesystem().open_input_file(table.storage.arrow_path(path)) as f:
        file_schema = pq.ParquetFile(f).schema_arrow
    return all(
        file_schema.field(f.name).type == f.type for f in schema if file_schema.get_field_index(f.name) >= 0
    )
