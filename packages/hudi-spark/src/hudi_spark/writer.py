"""``hudi_spark.write(df, base_uri, operation=..., options=...)``: core's write pipeline
distributed over a Spark DataFrame.

Stages (core functions; Spark only moves Arrow between them):
1. keys: ``mapInArrow`` calling ``records.prepare``;
2. precombine: ``repartition`` by key, then ``dedupe.deduplicate`` in each task;
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
import os
import pickle
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import IndexOptions, WriteOptions
from hudi_core.errors import ConfigError

from hudi_spark import stages
from hudi_spark.options import SparkOptions

if TYPE_CHECKING:
    from hudi_core.table import HudiTable
    from pyspark.sql import DataFrame

__all__ = ["OPERATIONS", "SparkWriteResult", "write"]

OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")
#: fault injection for tests: the first attempt of every write task fails after writing its files
FAIL_FIRST_ATTEMPT = "hoodie.spark.testing.fail.first.write.attempt"
#: fault injection for tests: every write task fails after writing its files while this file exists
FAIL_WHILE_EXISTS = "hoodie.spark.testing.fail.write.while.exists"
_STATUS_SCHEMA = pa.schema([("bucket", pa.int64()), ("token", pa.string()), ("status", pa.binary())])


@dataclass
class SparkWriteResult:
    instant: str | None
    operation: str
    num_records: int = 0
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files: list[str] = field(default_factory=list)
    #: files of failed or duplicate task attempts deleted before the commit
    removed_files: list[str] = field(default_factory=list)
    skipped: bool = False  # the write was a replay already committed


def _opt(options: Mapping[str, str], *keys: str) -> str | None:
    for k in keys:
        if options.get(k):
            return str(options[k])
    return None


def open_or_create(base_uri: str, options: Mapping[str, str], schema: pa.Schema) -> HudiTable:
    """Open the table, or create it from Hudi Spark's write options on the first write."""
    from hudi_core.table import HudiTable

    if HudiTable.exists(base_uri, options=options):
        return HudiTable.open(base_uri, options=options)
    name = _opt(options, "hoodie.table.name", WriteOptions.TABLE_NAME.key)
    keys = _opt(options, WriteOptions.RECORDKEY_FIELD.key, "hoodie.table.recordkey.fields")
    if not name or not keys:
        raise ConfigError(
            f"no Hudi table at {base_uri!r}: to create it pass hoodie.table.name and "
            f"{WriteOptions.RECORDKEY_FIELD.key} (got name={name!r}, record key={keys!r})"
        )
    return HudiTable.create(
        base_uri, name=name,
        table_type=_opt(options, WriteOptions.TABLE_TYPE.key, "hoodie.table.type") or "COPY_ON_WRITE",
        record_key_fields=keys,
        partition_fields=_opt(options, WriteOptions.PARTITIONPATH_FIELD.key, "hoodie.table.partition.fields"),
        ordering_field=_opt(options, WriteOptions.PRECOMBINE_FIELD.key, "hoodie.table.precombine.field"),
        options=options, schema=schema,
    )  # fmt: skip


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def _with(schema: pa.Schema, *fields: pa.Field) -> pa.Schema:
    names = {f.name for f in fields}
    return pa.schema([f for f in schema if f.name not in names] + list(fields))


def write(
    df: DataFrame,
    base_uri: str,
    *,
    operation: str = "upsert",
    options: Mapping[str, Any] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
) -> SparkWriteResult:
    """Write ``df`` to the Hudi table at ``base_uri`` as one commit (deltacommit on MOR),
    creating the table from the options on the first write.

    >>> hudi_spark.write(df, "/data/trips", operation="upsert", options={
    ...     "hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "uuid",
    ...     "hoodie.datasource.write.partitionpath.field": "city",
    ...     "hoodie.datasource.write.precombine.field": "ts"})  # doctest: +SKIP
    """
    from hudi_core.write.client import check_option_conflicts
    from hudi_core.write.dedupe import ordering_field
    from hudi_core.write.records import evolve_schema

    from hudi_spark.commit import SparkCommit

    op = operation.lower().strip()
    if op not in OPERATIONS:
        raise ConfigError(f"operation {operation!r} is not one of {', '.join(OPERATIONS)}")
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    input_schema = _arrow(df)
    data_schema = pa.schema([f for f in input_schema if not f.name.startswith("_hoodie_") or f.name == "_hoodie_is_deleted"])
    table = open_or_create(base_uri, opts, data_schema)
    check_option_conflicts(table, opts)
    cfg = table.write_config(opts)
    key_fields = table.config.record_key_fields
    required = [*key_fields, *(table.config.partition_fields if table.config.is_partitioned else [])]
    order = ordering_field(cfg)
    if order and op != "delete" and table.config.ordering_field:
        required.append(order)
    table_schema = table.schema()
    if op == "delete":
        evolve_schema(None, input_schema, required=required)
        if table_schema is None:
            return SparkWriteResult(None, op)
        schema = table_schema
    else:
        schema = evolve_schema(table_schema, input_schema, required=required)
    job = SparkCommit(table, cfg, op, schema, dict(extra_metadata or {}))
    if job.already_committed():
        return SparkWriteResult(None, op, skipped=True)
    job.start()
    try:
        statuses = _run_pipeline(df, table, cfg, op, schema, job)
        return job.commit(statuses)
    except BaseException:
        job.abort()
        raise


def _run_pipeline(df: DataFrame, table: HudiTable, cfg: HoodieConfig, op: str, schema: pa.Schema, job: Any) -> list[Any]:
    from hudi_core.write.records import BUCKET, RECORD_KEY
    from pyspark.sql import functions as F

    conf = cfg.to_dict()
    sc = df.sparkSession.sparkContext
    parallelism = int(cfg.get(SparkOptions.WRITE_PARALLELISM) or 0) or sc.defaultParallelism
    is_delete = op == "delete"
    # 1. keys (and the commit schema) in tasks; output schemas come from core run on no rows
    keyed_schema = _keyed_schema(_arrow(df), cfg, None if is_delete else schema, is_delete)
    combine = cfg.get(WriteOptions.COMBINE_BEFORE_UPSERT) if op in ("upsert", "delete") else cfg.get(
        WriteOptions.COMBINE_BEFORE_INSERT
    )
    # with precombine, rows carry their input position through the shuffle (ties: later row wins)
    prepared_schema = _with(keyed_schema, pa.field(stages.INPUT_SEQ, pa.int64())) if combine else keyed_schema
    keyed = df.mapInArrow(
        functools.partial(stages.prepare_task, config=conf, out_schema=prepared_schema, all_deletes=is_delete,
                          schema=None if is_delete else schema),
        _spark_schema(prepared_schema),
    )  # fmt: skip
    # 2. precombine: every row of a key in one task
    if combine:
        keyed = keyed.repartition(parallelism, RECORD_KEY).mapInArrow(
            functools.partial(stages.dedupe_task, config=conf, out_schema=keyed_schema), _spark_schema(keyed_schema)
        )
    if op in ("insert_overwrite", "insert_overwrite_table"):
        job.replaced = _replaced(keyed, table, op)
    # 3. index
    tagged, tagged_schema = _tag(keyed, keyed_schema, table, cfg, op, parallelism)
    tagged = tagged.persist()
    try:
        # 4. bucket assignment on the driver from counts; records labelled in tasks
        plan, offsets, profile = _plan(tagged, table, cfg, op)
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
        ctx = _write_context(table, cfg, job.instant, schema)
        written = assigned.repartition(n, F.col(BUCKET)).mapInArrow(
            functools.partial(_write_task, ctx=ctx, buckets=plan.buckets), _spark_schema(_STATUS_SCHEMA)
        )
        rows = written.toArrow()
    finally:
        tagged.unpersist()
    return [pickle.loads(b) for b in rows.column("status").to_pylist()]


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def _keyed_schema(input_schema: pa.Schema, cfg: HoodieConfig, schema: pa.Schema | None, is_delete: bool) -> pa.Schema:
    from hudi_core.keygen import key_generator_for
    from hudi_core.write.records import conform_to_schema, prepare

    records = prepare(input_schema.empty_table(), key_generator_for(cfg), cfg, all_deletes=is_delete)
    if schema is not None:
        records = conform_to_schema(records, schema)
    return _nullable(records.schema)


def _tagged_schema(keyed_schema: pa.Schema, cfg: HoodieConfig, key_fields: list[str]) -> pa.Schema:
    from hudi_core.write.index import index_for, tag_locations

    return _nullable(tag_locations(keyed_schema.empty_table(), index_for(cfg, key_fields), None).schema)


def _replaced(keyed: DataFrame, table: HudiTable, op: str) -> dict[str, list[str]]:
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.client import file_groups_of
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
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, timezone="UTC")


def _tag(keyed: DataFrame, keyed_schema: pa.Schema, table: HudiTable, cfg: HoodieConfig, op: str, parallelism: int) -> tuple[DataFrame, pa.Schema]:
    from hudi_core.write.records import RECORD_KEY
    from pyspark.sql import functions as F

    conf = cfg.to_dict()
    key_fields = table.config.record_key_fields
    tagged_schema = _tagged_schema(keyed_schema, cfg, table.config.record_key_fields)
    has_commits = len(table.timeline.completed_commits()) > 0
    kind = str(cfg.get_str(IndexOptions.TYPE)).upper()
    if kind == "BUCKET":
        schema = tagged_schema
        lookup = has_commits and op not in ("insert_overwrite", "insert_overwrite_table")
        fn = functools.partial(stages.tag_task, base_uri=table.base_uri, config=conf, record_key_fields=key_fields,
                               out_schema=schema, has_commits=lookup)  # fmt: skip
        return keyed.mapInArrow(fn, _spark_schema(schema)), schema
    schema = tagged_schema
    if op not in ("upsert", "delete") or not has_commits:
        # nothing to look up: every record is an insert (core's tagging without a view)
        fn = functools.partial(stages.tag_task, base_uri=table.base_uri, config=conf, record_key_fields=key_fields,
                               out_schema=schema, has_commits=False)  # fmt: skip
        return keyed.mapInArrow(fn, _spark_schema(schema)), schema
    from hudi_core.fs_view import FileSystemView

    spark = keyed.sparkSession
    parts = FileSystemView(table).partitions()
    part_df = spark.createDataFrame([(p,) for p in parts] or [("",)], "p string").repartition(max(1, min(len(parts), parallelism)))
    existing = part_df.mapInArrow(
        functools.partial(stages.locations_task, base_uri=table.base_uri, config=conf, out_schema=_existing_schema(table)),
        _spark_schema(_existing_schema(table)),
    )
    groups = parallelism * 2
    g = (F.abs(F.xxhash64(F.col(RECORD_KEY))) % groups).alias("_g")
    fn = functools.partial(_join_group, config=conf, record_key_fields=key_fields, out_schema=schema)
    tagged = (
        keyed.withColumn("_g", g).groupBy("_g")
        .cogroup(existing.withColumn("_g", g).groupBy("_g"))
        .applyInArrow(fn, _spark_schema(schema))
    )  # fmt: skip
    return tagged, schema


def _existing_schema(table: HudiTable) -> pa.Schema:
    from hudi_core.write.index.simple import LOCATIONS_SCHEMA

    return LOCATIONS_SCHEMA


def _join_group(records: pa.Table, existing: pa.Table, *, config: Mapping[str, str], record_key_fields: list[str], out_schema: pa.Schema) -> pa.Table:
    return stages.join_task(records, existing, config=config, record_key_fields=record_key_fields, out_schema=out_schema)


def _plan(tagged: DataFrame, table: HudiTable, cfg: HoodieConfig, op: str) -> tuple[Any, dict[tuple[int, str], int], Any]:
    """Workload profile from counts (collected), core's bucket plan, and per-task insert offsets."""
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.bucket_assigner import WorkloadProfile, assign, average_record_size
    from hudi_core.write.client import recent_commits, small_files
    from hudi_core.write.index import BUCKET_NUM
    from hudi_core.write.records import BASE_INSTANT, DELETE_FLAG, FILE_ID, PARTITION_PATH
    from pyspark.sql import functions as F

    prof = WorkloadProfile()
    if BUCKET_NUM in tagged.columns:
        rows = tagged.select(PARTITION_PATH, BUCKET_NUM, FILE_ID, BASE_INSTANT).distinct().collect()
        prof.hash_buckets = [(r[0], int(r[1]), r[2], r[3]) for r in rows]
    else:
        agg = (
            tagged.groupBy(PARTITION_PATH, FILE_ID, BASE_INSTANT)
            .agg(F.count(F.lit(1)).alias("n"), F.sum(F.col(DELETE_FLAG).cast("long")).alias("d"))
            .collect()
        )
        for r in agg:
            if r[FILE_ID] is None:
                prof.inserts[r[PARTITION_PATH]] = prof.inserts.get(r[PARTITION_PATH], 0) + int(r["n"])
            else:
                prof.updates[(r[PARTITION_PATH], r[FILE_ID], r[BASE_INSTANT])] = (int(r["n"]) - int(r["d"] or 0), int(r["d"] or 0))
    pack = op in ("insert", "upsert") and not prof.hash_buckets and str(cfg.get_str(IndexOptions.TYPE)).upper() != "BUCKET"
    has_data = bool(table.timeline.completed_commits())
    smalls = []
    if pack and prof.inserts and has_data:
        smalls = small_files(FileSystemView(table), list(prof.inserts), cfg, is_mor=table.config.is_mor)
    plan = assign(
        prof, smalls, cfg, is_mor=table.config.is_mor,
        avg_record_size=average_record_size(recent_commits(table), cfg), pack_small_files=pack,
    )  # fmt: skip
    offsets: dict[tuple[int, str], int] = {}
    if plan.insert_ranges:
        counts = (
            tagged.filter(F.col(FILE_ID).isNull())
            .groupBy(F.spark_partition_id().alias("pid"), PARTITION_PATH).count().collect()
        )
        running: dict[str, int] = {}
        for r in sorted(counts, key=lambda r: (r[PARTITION_PATH], r["pid"])):
            part = r[PARTITION_PATH]
            offsets[(int(r["pid"]), part)] = running.get(part, 0)
            running[part] = running.get(part, 0) + int(r["count"])
    return plan, offsets, prof


def _write_context(table: HudiTable, cfg: HoodieConfig, instant: str, schema: pa.Schema) -> Any:
    from hudi_core.schema.avro_schema import arrow_to_avro
    from hudi_core.write.dedupe import ordering_field
    from hudi_core.write.handles import WriteContext
    from hudi_core.write.payload import payload_for

    return WriteContext(
        base_uri=table.base_uri, instant=instant, is_mor=table.config.is_mor,
        avro_schema=arrow_to_avro(schema, table.name), schema=schema, options=cfg.to_dict(),
        ordering_field=ordering_field(cfg), payload=payload_for(cfg).value,
    )  # fmt: skip


def _write_task(batches: Iterator[pa.RecordBatch], *, ctx: Any, buckets: list[Any]) -> Iterator[pa.RecordBatch]:
    """Stages 5-6 in a task: every bucket of this task through core's handles."""
    import pyarrow.compute as pc
    from hudi_core.write.handles import write_bucket
    from hudi_core.write.records import BUCKET

    table = stages._table_of(batches)
    if table is None:
        return
    info = stages.task_info()
    # Spark's ids make the write token <partitionId>-<stageId>-<taskAttemptId>: a retried or
    # speculative attempt never collides with the files of another.
    attempt = info.attempt
    out = []
    for number in pc.unique(table.column(BUCKET)).to_pylist():
        records = table.filter(pc.equal(table.column(BUCKET), number))
        for status in write_bucket(ctx, buckets[number], records, attempt=attempt):
            out.append(pa.RecordBatch.from_pydict(
                {"bucket": [number], "token": [info.write_token], "status": [pickle.dumps(status)]},
                schema=_STATUS_SCHEMA,
            ))  # fmt: skip
    if ctx.options.get(FAIL_FIRST_ATTEMPT) == "true" and info.attempt_number == 0 and out:
        # fault injection (tests): the first attempt dies after writing its files
        raise RuntimeError(f"injected failure of task attempt {info.write_token} ({FAIL_FIRST_ATTEMPT})")
    flag = ctx.options.get(FAIL_WHILE_EXISTS)
    if flag and out and os.path.exists(flag):
        raise RuntimeError(f"injected failure of task attempt {info.write_token} ({FAIL_WHILE_EXISTS}={flag})")
    yield from out
