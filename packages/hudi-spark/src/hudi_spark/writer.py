"""``hudi_spark.write(df, base_uri, operation=..., options=...)``: core's write pipeline
distributed over a Spark DataFrame.

Stages (core functions; Spark only moves Arrow between them):
1. keys: ``mapInArrow`` calling ``records.prepare``;
2. precombine: ``repartition`` by key, then ``dedupe.deduplicate`` in each task (a key that is
   one column's value: the input rows are shuffled by that column and keyed after the shuffle);
3. index: BUCKET hashes in tasks (``index.tag_locations``); SIMPLE / GLOBAL_SIMPLE co-group the
   records with the existing key locations by key hash and ``join_locations`` each group;
4. bucket assignment: the driver collects counts, plans with ``bucket_assigner.assign``, tasks
   label records with ``assign_buckets``;
5-6. ``repartition`` by bucket; each task writes its buckets with ``handles.write_bucket`` and
   returns write statuses;
7. the driver drops files of failed or duplicate task attempts (markers) and commits.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.compaction import CompactionOptions
from hudi_core.config.keygen import KeyGenOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import IndexOptions, WriteOptions
from hudi_core.errors import ConfigError
from hudi_core.keygen.auto import default_operation, generates_keys
from hudi_core.write.transaction import retrying, writing

from hudi_spark import compat, simple_index, stages, table_ops, write_tasks
from hudi_spark.commit import SparkWriteResult
from hudi_spark.errors import task_error
from hudi_spark.options import SparkOptions, StreamOptions

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from hudi_core.timeline.timeline import ActiveTimeline
    from pyspark.sql import DataFrame

__all__ = ["OPERATIONS", "write"]

OPERATIONS = (
    "upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table", "delete_partition",
)  # fmt: skip


def _spark_schema(schema: pa.Schema) -> Any:
    return compat.spark_schema(schema)


def _with(schema: pa.Schema, *fields: pa.Field) -> pa.Schema:
    names = {f.name for f in fields}
    return pa.schema([f for f in schema if f.name not in names] + list(fields))


def resolve_operation(operation: str | None, options: Mapping[str, str]) -> str:
    """The write's operation: the ``operation`` argument or ``hoodie.datasource.write.operation``
    (they must agree when both are given), upsert by default as in Hudi."""
    given = options.get(WriteOptions.OPERATION.key)
    op = (operation or given or "upsert").lower().strip()
    if operation and given and given.lower().strip() != op:
        raise ConfigError(
            f"operation={operation!r} contradicts {WriteOptions.OPERATION.key}={given!r}; give one of them"
        )
    if op not in OPERATIONS:
        raise ConfigError(f"operation {op!r} is not one of {', '.join(OPERATIONS)}")
    return op


def write(
    df: DataFrame,
    base_uri: str,
    *,
    operation: str | None = None,
    options: Mapping[str, Any] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
) -> SparkWriteResult:
    """Write ``df`` to the Hudi table at ``base_uri`` as one commit (deltacommit on MOR),
    creating the table from the options on the first write; then Hudi's post-commit services
    (inline compaction, the automatic clean). ``operation`` defaults to
    ``hoodie.datasource.write.operation``, else upsert. As Apache Hudi's Spark datasource, a
    write to a MERGE_ON_READ table compacts inline (after every
    ``hoodie.compact.inline.max.delta.commits`` deltacommits, 5) unless the options say
    ``hoodie.compact.inline`` or ``hoodie.datasource.compaction.async.enable``; options whose
    keys start with ``hoodie.datasource.write.commitmeta.key.prefix`` (``_``) go into the
    commit's extra metadata beside ``extra_metadata``.

    >>> hudi_spark.write(df, "/data/trips", operation="upsert", options={
    ...     "hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
    ...     "hoodie.datasource.write.partitionpath.field": "city",
    ...     "hoodie.datasource.write.precombine.field": "ts"})  # doctest: +SKIP
    """
    return write_commit(df, base_uri, operation=operation, options=options, extra_metadata=extra_metadata,
                        batch=True)  # fmt: skip


def write_commit(
    df: DataFrame,
    base_uri: str,
    *,
    operation: str | None,
    options: Mapping[str, Any] | None,
    extra_metadata: Mapping[str, str] | None,
    batch: bool,
) -> SparkWriteResult:
    """:func:`write`; ``batch=False`` for a streaming write (the sink's micro-batches, the
    streamer's rounds), which compacts inline only when asked to, as Hudi's streaming writes."""
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    op = resolve_operation(operation, opts)
    prefix = opts.get(SparkOptions.COMMIT_METADATA_PREFIX.key, SparkOptions.COMMIT_METADATA_PREFIX.default)
    extra_metadata = {**{k: v for k, v in opts.items() if k.startswith(prefix)}, **(extra_metadata or {})}
    input_schema = _arrow(df)
    data_schema = pa.schema(
        [f for f in input_schema if not f.name.startswith("_hoodie_") or f.name == "_hoodie_is_deleted"]
    )
    table, created = table_ops.open_or_create(base_uri, opts, data_schema)
    if batch and table.config.is_mor and not _compaction_chosen(opts):
        opts[CompactionOptions.INLINE.key] = "true"  # Hudi's datasource writer's default
    try:
        cfg = table.write_config(opts)
        op = default_operation(op, operation or opts.get(WriteOptions.OPERATION.key), cfg, input_schema.names)
        with writing(table, cfg):  # single writer: the table's lease, one timeline load
            result, action, seen = retrying(
                lambda: _write(df, table, op, opts, input_schema, extra_metadata), cfg
            )
            if result.instant is not None and action:  # (delete_partition ran them in core)
                table_ops.run_table_services(base_uri, opts, action=action, timeline=seen)
    except BaseException:
        if created:  # (only when the table still has no commit)
            table_ops.forget_new_table(base_uri, opts)
        raise
    return result


def _compaction_chosen(opts: Mapping[str, str]) -> bool:
    given = {k.lower() for k in opts}
    return CompactionOptions.INLINE.key in given or StreamOptions.ASYNC_COMPACT.key in given


def _write(
    df: DataFrame, table: HudiTable, op: str, opts: dict[str, str], input_schema: pa.Schema,
    extra_metadata: Mapping[str, str] | None,
) -> tuple[SparkWriteResult, str, ActiveTimeline | None]:  # fmt: skip
    """The write, its action, and (optimistic concurrency control) the load of the timeline its
    commit was made on, for the services after it."""
    from hudi_core.client.write_client import check_option_conflicts, check_write_options, drops_duplicates
    from hudi_core.write.commit import check_schema_on_read
    from hudi_core.write.key_encoding import with_table_key_encoding
    from hudi_core.write.records import evolve_schema, stored_schema

    from hudi_spark.commit import SparkCommit

    check_option_conflicts(table, opts)
    cfg = with_table_key_encoding(table, table.write_config(opts))
    check_write_options(cfg)
    drops_duplicates(cfg, op)  # refused combinations fail before the instant
    if op == "delete_partition":
        return table_ops.delete_partitions(df, table, cfg), "", None
    required, table_schema = table_ops.required_columns(table, cfg, op), table.schema()
    if op == "delete":
        evolve_schema(None, input_schema, required=required)
        if table_schema is None:
            return SparkWriteResult(None, op), "", None
        schema = stored_schema(table.config, table_schema)
    else:
        schema = evolve_schema(
            table_schema, input_schema, required=required, config=cfg, table_config=table.config
        )
        check_schema_on_read(table, table_schema, schema)
    job = SparkCommit(table, cfg, op, schema, dict(extra_metadata or {}))
    if job.already_committed():
        return SparkWriteResult(None, op, skipped=True), "", None
    job.start()
    try:
        with compat.batches_bounded_by_rows(df):
            statuses = _run_pipeline(df, table, cfg, op, schema, job)
        return job.commit(statuses), job.action, job.txn.committed
    except BaseException as e:
        job.abort()
        error = task_error(e)  # a task's hudi_core error (a null key, ...) as itself
        if error is e:
            raise
        raise error from e


def _run_pipeline(
    df: DataFrame, table: HudiTable, cfg: HoodieConfig, op: str, schema: pa.Schema, job: Any
) -> list[Any]:
    from hudi_core.client.write_client import drops_duplicates
    from hudi_core.write.dedupe import combines
    from hudi_core.write.index import index_for
    from hudi_core.write.records import BUCKET, PARTITION_PATH
    from pyspark.sql import functions as F

    conf = cfg.to_dict()
    if generates_keys(cfg):  # the tasks make keys up with the instant
        conf[KeyGenOptions.AUTO_KEY_INSTANT.key] = job.instant
    sc = df.sparkSession.sparkContext
    parallelism = int(cfg.get(SparkOptions.WRITE_PARALLELISM) or 0) or sc.defaultParallelism
    is_delete = op == "delete"
    # 1. keys (and the commit schema) in tasks; output schemas come from core run on no rows
    keyed_schema = _keyed_schema(_arrow(df), cfg, None if is_delete else schema, is_delete)
    drop = drops_duplicates(cfg, op)  # hoodie.datasource.write.insert.drop.duplicates
    combine = combines(cfg, op)
    # with precombine, rows carry their input position through the shuffle (ties: later row wins)
    seq = [pa.field(stages.INPUT_SEQ, pa.int64())] if combine else []
    prepared_schema = _with(keyed_schema, *seq)
    prep = functools.partial(stages.prepare_task, config=conf, out_schema=prepared_schema, all_deletes=is_delete,
                             schema=None if is_delete else schema, operation=op)  # fmt: skip
    dedupe = functools.partial(stages.dedupe_task, config=conf)
    kind = str(cfg.get_str(IndexOptions.TYPE)).upper()
    overwrite = op in ("insert_overwrite", "insert_overwrite_table")
    has_commits = bool(table.timeline.completed_commits())
    tagged_schema = _tagged_schema(keyed_schema, cfg, table.config.record_key_fields)
    ctx = _write_context(table, cfg, job.instant, schema, op)
    # shuffles by key (precombine, index join) gather each task's rows: enough tasks that one
    # holds about hoodie.spark.write.task.max.bytes of the input at most
    task_max = int(cfg.get(SparkOptions.TASK_MAX_BYTES))
    input_bytes = _input_bytes(df)
    key_tasks = _tasks_for(input_bytes, parallelism, task_max)
    # Every JVM<->Python hop costs about as much as core's work on the rows, so consecutive
    # per-task steps run in one mapInArrow (stages.chain) and shuffles happen only where rows
    # must meet: the same key (precombine, index join) or the same file group (write).
    if kind == "BUCKET" and not overwrite:
        return _write_hash_buckets_direct(df, table, cfg, ctx, job, parallelism, input_bytes, combine=combine, prep=prep,
                                          tag=_tag_step(table, cfg, _with(tagged_schema, *seq), lookup=has_commits,
                                                        view_key=job.instant),
                                          dedupe=functools.partial(dedupe, out_schema=tagged_schema))  # fmt: skip
    if kind == "BUCKET":
        # the key hash fixes the file group: one shuffle by (partition, hash bucket) brings every
        # row of a key and of a file group together; precombine and the write run after it
        tag = _tag_step(table, cfg, _with(tagged_schema, *seq), lookup=has_commits and not overwrite)
        front = _map(df, [prep, tag], _with(tagged_schema, *seq))
        if overwrite:
            job.replaced = _replaced(front, table, op)
        back = [functools.partial(dedupe, out_schema=tagged_schema)] if combine else []
        tasks = _hash_write_tasks(parallelism, input_bytes)
        return _write_hash_buckets(front, back, ctx, job, tasks, task_max=task_max)
    if op == "bulk_insert":
        # no lookup and no small-file packing: each task plans and writes new file groups for its
        # own rows (Hudi's bulk_insert), no driver plan and no shuffle by file group
        tag = _tag_step(table, cfg, tagged_schema, lookup=False)
        write_new = functools.partial(write_tasks.write_new_task, ctx=ctx, max_bytes=task_max)
        job.inflight(_empty_profile())
        if combine:
            front, keying = _keyed(df, cfg, prep, prepared_schema, dedupe, keyed_schema, key_tasks, task_max)
            written = _map(front, [*keying, tag, write_new], write_tasks.STATUS_SCHEMA)
        else:
            written = _map(df, [prep, tag, write_new], write_tasks.STATUS_SCHEMA)
        return _statuses(written)
    steps: list[Any] = [prep]
    keyed = df
    held: DataFrame | None = None  # the keyed records, cached for a distinct of their partitions
    if combine:
        keyed, steps = _keyed(df, cfg, prep, prepared_schema, dedupe, keyed_schema, key_tasks, task_max)
    if drop and has_commits:  # in the key tasks, after the precombine
        steps.append(functools.partial(
            stages.drop_stored_task, base_uri=table.base_uri, config=conf,
            record_key_fields=table.config.record_key_fields, out_schema=keyed_schema, view_key=job.instant,
        ))  # fmt: skip
    if overwrite:
        keyed = _map(keyed, steps, keyed_schema)
        steps = []
        job.replaced = _replaced(keyed, table, op)
    # 3. index
    if op in ("upsert", "delete") and has_commits and simple_index.lookup_in_tasks(cfg, key_tasks):
        # core's tag_locations in the tasks holding the keys (footer-pruned reads, no co-group)
        tagged = _map(
            keyed,
            [*steps, _tag_step(table, cfg, tagged_schema, lookup=True, view_key=job.instant)],
            tagged_schema,
        )
    elif op in ("upsert", "delete") and has_commits:
        keyed = _map(keyed, steps, keyed_schema) if steps else keyed
        parts = None
        if not index_for(cfg, table.config.record_key_fields).is_global:
            # Hudi's SIMPLE index reads the existing keys of the partitions the records go to
            # only, found by a distinct over the records, cached for it as Hudi caches them
            keyed = held = _persisted(keyed)
            try:
                parts = [r[0] for r in keyed.select(PARTITION_PATH).distinct().collect()]
            except BaseException:  # (a task's error: a null key...) the cache goes with the write
                held.unpersist()
                raise
        tagged = simple_index.join_existing(
            keyed, table, cfg, tagged_schema, max(parallelism * 2, key_tasks), job.instant, partitions=parts
        )
    else:  # nothing to look up: every record is an insert (core's tagging without a view)
        tagged = _map(keyed, [*steps, _tag_step(table, cfg, tagged_schema, lookup=False)], tagged_schema)
    tagged = _persisted(tagged)
    try:
        # 4. bucket assignment on the driver from counts; records labelled in tasks
        plan, offsets, profile = simple_index.plan_buckets(tagged, table, cfg, op, clustered=ctx.clustered)
        if held is not None:  # the tagged records are cached now
            held.unpersist()
        job.inflight(profile)
        assigned_schema = _with(tagged_schema, pa.field(BUCKET, pa.int64()))
        assigned = tagged.mapInArrow(
            functools.partial(stages.assign_task, plan=plan, offsets=offsets, out_schema=assigned_schema),
            _spark_schema(assigned_schema),
        )
        if not plan.buckets:
            return []
        # 5-6. shuffle by bucket; each task writes its buckets with core's handles
        n = max(1, min(len(plan.buckets), parallelism * 4))
        steps = _per_group(
            [functools.partial(write_tasks.write_task, ctx=ctx, buckets=plan.buckets)],
            column=BUCKET,
            task_max=task_max,
        )
        return _statuses(_map(assigned.repartition(n, F.col(BUCKET)), steps, write_tasks.STATUS_SCHEMA))
    finally:
        tagged.unpersist()
        if held is not None:
            held.unpersist()


#: Spark's in-memory cache compresses its columns (the session's setting, on by default)
CACHE_COMPRESSED = "spark.sql.inMemoryColumnarStorage.compressed"


def _persisted(df: DataFrame) -> DataFrame:
    """``df.persist()`` with the cache's columns stored uncompressed, unless the session set
    :data:`CACHE_COMPRESSED` itself. The tagged records are cached for the write's two jobs only
    (counts for the plan, then labels and files); building a compressed cache tries dictionary
    and run-length encoding on every value of every column (``gatherCompressibilityStats``, then
    ``compress``): the five 100k-row upserts of the trips bench, 5 rounds alternating in one
    session, took 9.71 s of the JVM's CPU (10.94 s) compressed and 8.31 s (10.12 s)
    uncompressed, medians of the last 4. The cache takes more memory (it spills to disk past
    Spark's storage memory). Spark reads the setting when the cache is declared, so the
    session's own comes back at once."""
    with compat.setting(df.sparkSession, CACHE_COMPRESSED, "false", unless_set=True):
        return df.persist()


def _map(df: DataFrame, steps: list[Any], out_schema: pa.Schema) -> DataFrame:
    """One mapInArrow running ``steps`` (task functions over batch iterators) in sequence."""
    return df.mapInArrow(functools.partial(stages.chain, steps=steps), _spark_schema(out_schema))


def _statuses(written: DataFrame) -> list[Any]:
    rows = compat.to_arrow(written)
    return [pickle.loads(b) for b in rows.column("status").to_pylist()]


def _empty_profile() -> Any:
    from hudi_core.write.bucket_assigner import WorkloadProfile

    return WorkloadProfile()  # as core's streamed writes: the plan is made in the tasks


def _tag_step(
    table: HudiTable, cfg: HoodieConfig, out_schema: pa.Schema, *, lookup: bool, view_key: str | None = None
) -> Any:
    return functools.partial(stages.tag_task, base_uri=table.base_uri, config=cfg.to_dict(),
                             record_key_fields=table.config.record_key_fields, out_schema=out_schema,
                             has_commits=lookup, view_key=view_key)  # fmt: skip


def _write_hash_buckets_direct(df: DataFrame, table: HudiTable, cfg: HoodieConfig, ctx: Any, job: Any, parallelism: int,
                               size: float, *, combine: bool, prep: Any, tag: Any, dedupe: Any) -> list[Any]:  # fmt: skip
    """BUCKET index with one hop into Python for the rows: the hash bucket is computed in the
    JVM (one string key field) or by an Arrow UDF over the key and partition columns only; Spark
    shuffles the untouched rows by (partition columns, bucket), adding the input position for
    precombine ties; then one task function per group keys, tags, precombines and writes them.
    An input no larger than ``hoodie.spark.write.single.task.max.bytes`` skips the shuffle: one
    task writes every file group."""
    from hudi_core.write.index import BUCKET_NUM, index_for
    from pyspark.sql import functions as F

    fields = [
        *table.config.record_key_fields,
        *(table.config.partition_fields if table.config.is_partitioned else []),
    ]
    top = list(dict.fromkeys(f.split(".")[0] for f in fields if f.split(".")[0] in df.columns))
    parts = list(dict.fromkeys(
        f.split(".")[0] for f in (table.config.partition_fields if table.config.is_partitioned else []) if f.split(".")[0] in df.columns
    ))  # fmt: skip
    conf, key_fields = cfg.to_dict(), table.config.record_key_fields

    def buckets(columns: pa.Array) -> pa.Array:  # type hints tell Spark it is a scalar Arrow UDF
        return stages.hash_buckets(columns, config=conf, record_key_fields=key_fields)

    job.inflight(_empty_profile())
    if size <= int(cfg.get(SparkOptions.SINGLE_TASK_MAX_BYTES)):
        # a tiny input (a small micro-batch): one task holds every file group, so there is no
        # shuffle stage, no bucket column and no projection to plan; the task numbers the rows
        # in input order itself (stages.prepare_task)
        shuffled = df.coalesce(1)
    else:
        # Every DataFrame operation is a py4j round trip and an analysis of the plan in the JVM
        # (~10 ms each, a fixed cost of every write): the shuffle's columns come from one
        # projection of SQL expressions, and the tasks get only the bucket and the input
        # position beside the rows (a task that spills finds its rows' file groups itself,
        # stages.file_group_ids). The shuffle refers to the bucket column rather than repeating
        # its expression: ``reflect`` is not code-generated and never shared, and evaluating it
        # twice made a 1M-row bulk_insert 0.4 s slower.
        part_sql = [_quote(c) for c in parts]
        seq_sql = [f"monotonically_increasing_id() AS {stages.INPUT_SEQ}"] if combine else []  # ties
        bucket = _jvm_bucket(df, index_for(cfg, key_fields))
        if bucket is not None:
            staged = df.selectExpr("*", f"{bucket} AS {BUCKET_NUM}", *seq_sql)
        elif compat.has_arrow_udf():
            from pyspark.sql.functions import arrow_udf

            # (PySpark's stubs know only the form with functionType, which warns at run time)
            udf = arrow_udf(buckets, "int")(F.struct(*[F.col(c) for c in top]))  # type: ignore[call-overload]
            staged = df.select("*", udf.alias(BUCKET_NUM), *[F.expr(e) for e in seq_sql])
        else:  # PySpark < 4.1: no scalar Arrow UDF; the bucket is added to the rows in Python
            with_bucket = _with(_arrow(df), pa.field(BUCKET_NUM, pa.int32()))
            add = functools.partial(stages.add_bucket_task, config=conf, record_key_fields=key_fields,
                                    keys=top, out_schema=with_bucket)  # fmt: skip
            staged = df.mapInArrow(add, _spark_schema(with_bucket)).select("*", *[F.expr(e) for e in seq_sql])
        # a task costs ~50 ms of fixed work in Python: one wave of tasks for small inputs; four
        # waves for larger ones, so the last wave's uneven ends idle a core for less time (10M
        # rows on local[2]: 18.6 s with 8 tasks, 20.5 s with 4, 21.5 s with 2)
        tasks = _hash_write_tasks(parallelism, size)
        if hasattr(staged, "repartitionById"):  # pyspark >= 4.1
            # a partition's hash buckets go to consecutive tasks: every task gets its share of
            # every partition (a hash of the group would pile several groups on one task)
            first = f"pmod(hash({', '.join(part_sql)}), {tasks})" if parts else "0"
            shuffled = staged.repartitionById(
                tasks, F.expr(f"CAST(({first} + {BUCKET_NUM}) % {tasks} AS INT)")
            )
        else:
            shuffled = staged.repartition(tasks, F.expr(f"hash({', '.join([*part_sql, BUCKET_NUM])})"))
    steps = [
        prep,
        tag,
        *([dedupe] if combine else []),
        functools.partial(write_tasks.write_hash_task, ctx=ctx),
    ]
    groups = functools.partial(stages.file_group_ids, config=conf, record_key_fields=key_fields)
    steps = _per_group(steps, column=groups, task_max=int(cfg.get(SparkOptions.TASK_MAX_BYTES)))
    return _statuses(_map(shuffled, steps, write_tasks.STATUS_SCHEMA))


def _with_group(df: DataFrame, *columns: str) -> DataFrame:
    """``df`` with :data:`GROUP`: one id per (partition, hash bucket), from the SQL ``columns``
    that name them. A Spark hash collision only puts two groups in one run, which the task
    writes together as it writes any task's groups."""
    return df.selectExpr("*", f"hash({', '.join(columns)}) AS {GROUP}")


def _hash_write_tasks(parallelism: int, size: float) -> int:
    """Write tasks of the BUCKET index: one per core for small inputs, four per core above (the
    last wave's uneven ends then idle a core for less time)."""
    return parallelism * (1 if size < _SMALL_INPUT_BYTES else 4)


def _per_group(
    steps: list[Any], *, column: str | Callable[[pa.RecordBatch], Any], task_max: int
) -> list[Any]:
    """``steps`` wrapped so a task holds at most ``task_max`` bytes of its rows: past that it
    spills them to local disk and runs ``steps`` on a few whole groups (values of the integer
    ``column``, or of a function of a batch) at a time (``stages.by_group``)."""
    return [functools.partial(stages.by_group, column=column, steps=steps, max_bytes=task_max)]


def _keyed(df: DataFrame, cfg: HoodieConfig, prep: Any, prepared_schema: pa.Schema, dedupe: Any,
           keyed_schema: pa.Schema, tasks: int, task_max: int) -> tuple[DataFrame, list[Any]]:  # fmt: skip
    """The records shuffled by key for precombine, and the task steps that key and precombine
    them (their output: ``keyed_schema``).

    When the key is one top-level column's value (:func:`_raw_by_key` says when), the input
    rows themselves are shuffled by that column and each key task keys and precombines its rows
    in one pass: one JVM<->Python hop fewer than keying the rows in the input's tasks and
    shuffling the keyed rows, and the keying spread over the key tasks whatever the input's
    partitioning (a 100k-row upsert read from one file: one task). Else the rows are keyed in
    the input's tasks and shuffled by record key (:func:`_by_key`)."""
    raw = _raw_by_key(df, cfg, tasks)
    if raw is not None:
        return raw, _dedupe_by_key(dedupe, keyed_schema, task_max, keying=prep)
    keyed = _by_key(_map(df, [prep], prepared_schema), tasks)
    return keyed, _dedupe_by_key(dedupe, keyed_schema, task_max)


#: key generators whose key of one record key field is that field's value as a string
_FIELD_KEYGENS = frozenset({"SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM"})


def _raw_by_key(df: DataFrame, cfg: HoodieConfig, tasks: int) -> DataFrame | None:
    """The input rows hash-partitioned by the record key field into ``tasks`` tasks, with
    their input position (:data:`stages.INPUT_SEQ`, for precombine's ties) and key group
    (:data:`KEY_GROUP`, for a spilling task) computed in the JVM in one projection.

    Only where two rows with one key hold one field value: a built-in key generator, one key
    field, a top-level string or integer column (its text is the key; null or empty is an error
    in any task). Several fields are joined as ``f1:v1,f2:v2``, whose separators and null
    placeholders a value may hold, so two different pairs of values can make one key: they are
    shuffled by the key itself (None here)."""
    from hudi_core.keygen import key_generator_for, key_generator_name
    from pyspark.sql.types import IntegralType, StringType

    if key_generator_name(cfg) not in _FIELD_KEYGENS:
        return None
    fields = list(key_generator_for(cfg).record_key_fields)
    if len(fields) != 1 or fields[0] not in df.columns:
        return None
    if not isinstance(df.schema[fields[0]].dataType, (StringType, IntegralType)):
        return None
    return _shuffled_by_key(df, fields[0], tasks, f"monotonically_increasing_id() AS {stages.INPUT_SEQ}")


def _by_key(prepared: DataFrame, tasks: int) -> DataFrame:
    """The keyed records shuffled by record key (:func:`_shuffled_by_key`)."""
    from hudi_core.write.records import RECORD_KEY

    return _shuffled_by_key(prepared, RECORD_KEY, tasks)


def _shuffled_by_key(df: DataFrame, column: str, tasks: int, *more_sql: str) -> DataFrame:
    """``df`` hash-partitioned by ``column`` into ``tasks`` tasks (every row of a value in one),
    each row with its key group (:data:`KEY_GROUP`, a hash of the value) for
    :func:`_dedupe_by_key` and the ``more_sql`` columns, all from one projection."""
    from pyspark.sql import functions as F

    name = _quote(column)
    group = f"CAST(pmod(xxhash64({name}), {_KEY_GROUPS}) AS INT) AS {KEY_GROUP}"
    return df.selectExpr("*", *more_sql, group).repartition(tasks, F.col(name))


def _dedupe_by_key(dedupe: Any, out_schema: pa.Schema, task_max: int, *, keying: Any = None) -> list[Any]:
    """Precombine in a key task (after ``keying``, the step that keys raw rows, when the rows
    were shuffled unkeyed): all of the task's records while they fit in ``task_max``, else
    spilled and taken a few key groups at a time (a key's duplicates share its group)."""
    steps = [stages.drop_columns_task(KEY_GROUP), *([keying] if keying else []),
             functools.partial(dedupe, out_schema=out_schema)]  # fmt: skip
    return _per_group(steps, column=KEY_GROUP, task_max=task_max)


#: a key's group within its key task (a hash of the key), so precombine can spill like a write
KEY_GROUP = "_hoodie_w_key_group"
_KEY_GROUPS = 4096
#: the (partition, hash bucket) group of a row, computed in the JVM for the shuffle
GROUP = "_hoodie_w_group"
#: below this input size (Spark's estimate) a write runs one task per core
_SMALL_INPUT_BYTES = 64 * 1024 * 1024
#: at most this many tasks per key shuffle, however large the estimate
_MAX_SHUFFLE_TASKS = 10_000


def _jvm_bucket(df: DataFrame, index: Any) -> str | None:
    """The hash bucket as a JVM (SQL) expression when the key is one top-level string column
    (the key's text is the column's value), else None. ``java.util.Objects.hashCode`` is Java's
    own ``String.hashCode`` (UTF-16 included); a one-element list hashes to ``31 + h``; the sum is
    taken in 64 bits, so masking its low 31 bits is Java's int arithmetic without overflow."""
    from pyspark.sql.types import StringType

    fields = tuple(index.hash_fields)
    if len(fields) != 1 or fields != tuple(index.record_key_fields) or fields[0] not in df.columns:
        return None
    if not isinstance(df.schema[fields[0]].dataType, StringType):
        return None
    h = f"CAST(reflect('java.util.Objects', 'hashCode', {_quote(fields[0])}) AS BIGINT)"
    return f"CAST(((31 + {h}) & {0x7FFFFFFF}) % {int(index.num_buckets)} AS INT)"


def _quote(column: str) -> str:
    """A column name as a SQL identifier."""
    return "`" + column.replace("`", "``") + "`"


def _tasks_for(size: float, parallelism: int, task_max: int) -> int:
    """Tasks for a shuffle of an input of ``size`` bytes: the parallelism, more when a task would
    hold more than ``task_max`` bytes (an unknown size keeps the parallelism)."""
    if size == float("inf"):
        return parallelism
    return max(parallelism, min(_MAX_SHUFFLE_TASKS, int(-(-size // max(1, task_max)))))


def _input_bytes(df: DataFrame) -> float:
    """Spark's estimate of the input's size (unknown: infinite). Spark reports an input it
    cannot size (an RDD, some streaming sources) as ``spark.sql.defaultSizeInBytes``
    (Long.MaxValue by default): that is unknown too, not a size to plan tasks by.

    The estimate comes from the analyzed plan, which Spark has already built: asking the
    optimized plan ran the optimizer over ``df`` once more on every write (~10 ms, for the same
    estimate: the size of the relations read, scaled by the columns kept)."""
    try:
        size = float(int(str(df._jdf.queryExecution().analyzed().stats().sizeInBytes())))
    except Exception:  # an input without statistics: assume it is large
        return float("inf")
    default = df.sparkSession.conf.get("spark.sql.defaultSizeInBytes", None)
    if size >= 2**62 or (default is not None and default.isdigit() and size >= int(default)):
        return float("inf")
    return size


def _write_hash_buckets(
    front: DataFrame, back: list[Any], ctx: Any, job: Any, tasks: int, *, task_max: int
) -> list[Any]:
    """BUCKET index: the key hash fixes each record's file group, so no driver plan (and no pass
    over the data for counts) is needed: records are shuffled by (partition, hash bucket) and each
    task plans its own groups with core's ``profile_of``/``assign`` and writes them (a few whole
    groups at a time when a task's input is large, see ``_per_group``)."""
    from hudi_core.write.index import BUCKET_NUM
    from hudi_core.write.records import PARTITION_PATH
    from pyspark.sql import functions as F

    job.inflight(_empty_profile())
    shuffled = _with_group(front, PARTITION_PATH, BUCKET_NUM).repartition(tasks, F.col(GROUP))
    # the group id is only for the split: the tasks' steps see the columns they were given
    steps = [stages.drop_columns_task(GROUP), *back, functools.partial(write_tasks.write_hash_task, ctx=ctx)]
    return _statuses(
        _map(shuffled, _per_group(steps, column=GROUP, task_max=task_max), write_tasks.STATUS_SCHEMA)
    )


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def _keyed_schema(
    input_schema: pa.Schema, cfg: HoodieConfig, schema: pa.Schema | None, is_delete: bool
) -> pa.Schema:
    from hudi_core.keygen import write_key_generator
    from hudi_core.write.records import conform_to_schema, prepare

    records = prepare(input_schema.empty_table(), write_key_generator(cfg), cfg, all_deletes=is_delete)
    if schema is not None:
        records = conform_to_schema(records, schema)
    return _nullable(records.schema)


def _tagged_schema(keyed_schema: pa.Schema, cfg: HoodieConfig, key_fields: list[str]) -> pa.Schema:
    from hudi_core.write.index import index_for, tag_locations

    return _nullable(tag_locations(keyed_schema.empty_table(), index_for(cfg, key_fields), None).schema)


def _replaced(keyed: DataFrame, table: HudiTable, op: str) -> dict[str, list[str]]:
    from hudi_core.client.write_client import file_groups_of
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.records import PARTITION_PATH

    if not table.timeline.completed_commits():
        return {}
    view = FileSystemView(table)
    if op == "insert_overwrite_table":
        parts = view.partitions()
    else:
        parts = [r[0] for r in keyed.select(PARTITION_PATH).distinct().collect()]
    return file_groups_of(view, parts)


def _arrow(df: DataFrame) -> pa.Schema:
    return compat.arrow_schema(df.schema)


def _write_context(table: HudiTable, cfg: HoodieConfig, instant: str, schema: pa.Schema, op: str) -> Any:
    from hudi_core.fs_view import FileSystemView
    from hudi_core.io.bootstrap_index import bootstrap_sources
    from hudi_core.schema.avro_schema import arrow_to_avro
    from hudi_core.write.clustering import clustered_file_groups
    from hudi_core.write.dedupe import ordering_field
    from hudi_core.write.handles import WriteContext
    from hudi_core.write.payload import payload_for

    view = FileSystemView(table) if table.timeline.completed_commits() else None
    return WriteContext(
        base_uri=table.base_uri, instant=instant, is_mor=table.config.is_mor,
        avro_schema=arrow_to_avro(schema, table.name), schema=schema, options=cfg.to_dict(),
        ordering_field=ordering_field(cfg), payload=payload_for(cfg).value,
        clustered=clustered_file_groups(view, cfg), operation=op, history=table.schema_history(),
        bootstrap_sources=bootstrap_sources(table),
    )  # fmt: skip
