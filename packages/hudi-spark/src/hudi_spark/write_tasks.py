"""The write stage's task functions: core's handles write a task's labelled rows, and each
write status goes back to the driver as an Arrow row (:data:`STATUS_SCHEMA`).

Module-level callables with picklable arguments only, like :mod:`hudi_spark.stages`.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from hudi_spark import stages

__all__ = [
    "FAIL_FIRST_ATTEMPT",
    "FAIL_WHILE_EXISTS",
    "STATUS_SCHEMA",
    "write_hash_task",
    "write_labelled",
    "write_new_task",
    "write_task",
]

#: fault injection for tests: the first attempt of every write task fails after writing its files
FAIL_FIRST_ATTEMPT = "hoodie.spark.testing.fail.first.write.attempt"
#: fault injection for tests: every write task fails after writing its files while this file exists
FAIL_WHILE_EXISTS = "hoodie.spark.testing.fail.write.while.exists"
#: a write task's output: one row per write status (pickled), with its bucket and write token
STATUS_SCHEMA = pa.schema([("bucket", pa.int64()), ("token", pa.string()), ("status", pa.binary())])


def write_task(
    batches: Iterator[pa.RecordBatch], *, ctx: Any, buckets: list[Any]
) -> Iterator[pa.RecordBatch]:
    """Stages 5-6 in a task: every bucket of this task through core's handles."""
    table = stages.table_of(batches)
    if table is None:
        return
    yield from write_labelled(table, ctx, buckets)


def write_new_task(
    batches: Iterator[pa.RecordBatch], *, ctx: Any, max_bytes: int
) -> Iterator[pa.RecordBatch]:
    """bulk_insert in a task: new file groups for this task's rows, rolled over at
    ``hoodie.parquet.max.file.size`` of parquet bytes written (as Apache Hudi's bulk_insert).

    In input order (``NONE``, Hudi's default ``hoodie.bulkinsert.sort.mode``) the rows are
    written batch by batch as they arrive (core's
    :class:`~hudi_core.write.handles.bulk.BulkInsertWriter`: one open file per partition, a row
    group per ~8 MB of a partition's rows), so the JVM converts the next batch to Arrow while
    Python encodes this one; gathering the task's rows first made the two take turns. The
    sorting modes sort within the task (Hudi's PARTITION_SORT; GLOBAL_SORT's
    range shuffle is not made): rows are taken ``max_bytes`` (Arrow) at a time, each chunk sorted
    and written to new file groups of its own, planned with the parquet bytes per record
    measured on the task's first rows (core's ``encoded_record_size``)."""
    from hudi_core.config.write import WriteOptions
    from hudi_core.write.bucket_assigner import assign, assign_buckets, profile_of
    from hudi_core.write.handles.bulk import BulkInsertWriter
    from hudi_core.write.handles.create import encoded_record_size
    from hudi_core.write.records import PARTITION_PATH, RECORD_KEY

    mode = str(ctx.config.get_str(WriteOptions.BULK_INSERT_SORT_MODE) or "NONE").upper()
    if mode in ("NONE", "PARTITION_PATH_REPARTITION"):
        info = stages.task_info()
        with BulkInsertWriter(ctx, attempt=info.attempt, buffer_bytes=max_bytes) as writer:
            writer.add_all(batches)
            statuses = writer.close()
        yield from _status_rows([(0, s) for s in statuses], ctx, info)
        return
    record_size = None
    for table in stages.chunks(batches, max_bytes):
        table = table.sort_by([(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")])
        if record_size is None:
            record_size = encoded_record_size(ctx, table)
        plan = assign(profile_of(table), [], ctx.config, is_mor=ctx.is_mor, avg_record_size=record_size,
                      pack_small_files=False)  # fmt: skip
        yield from write_labelled(assign_buckets(table, plan), ctx, plan.buckets)
        del table  # not held while the next chunk is read in


def write_hash_task(batches: Iterator[pa.RecordBatch], *, ctx: Any) -> Iterator[pa.RecordBatch]:
    """Stages 4-6 in a task for the BUCKET index: this task holds every record of its
    (partition, hash bucket) groups, so core plans and labels them here."""
    from hudi_core.write.bucket_assigner import assign, assign_buckets, profile_of
    from hudi_core.write.clustering import reject_clustered_updates

    table = stages.table_of(batches)
    if table is None:
        return
    profile = profile_of(table)
    reject_clustered_updates(profile, ctx.clustered)
    plan = assign(profile, [], ctx.config, is_mor=ctx.is_mor, avg_record_size=1, pack_small_files=False)
    yield from write_labelled(assign_buckets(table, plan), ctx, plan.buckets)


def write_labelled(table: pa.Table, ctx: Any, buckets: list[Any]) -> Iterator[pa.RecordBatch]:
    """The rows of each bucket (core's ``BUCKET`` label) through core's ``write_bucket``; one
    status row per write status, with the task's write token."""
    import pyarrow.compute as pc
    from hudi_core.write.handles import write_bucket
    from hudi_core.write.records import BUCKET

    info = stages.task_info()
    # Spark's ids make the write token <partitionId>-<stageId>-<taskAttemptId>: a retried or
    # speculative attempt never collides with the files of another.
    attempt = info.attempt
    written: list[tuple[int, Any]] = []
    for number in pc.unique(table.column(BUCKET)).to_pylist():
        records = table.filter(pc.equal(table.column(BUCKET), number))
        written.extend((number, s) for s in write_bucket(ctx, buckets[number], records, attempt=attempt))
    yield from _status_rows(written, ctx, info)


def _status_rows(written: list[tuple[int, Any]], ctx: Any, info: Any) -> Iterator[pa.RecordBatch]:
    """One status row per ``(bucket, write status)``, with the task's write token."""
    out = [
        pa.RecordBatch.from_pydict(
            {"bucket": [number], "token": [info.write_token], "status": [pickle.dumps(status)]},
            schema=STATUS_SCHEMA,
        )
        for number, status in written
    ]
    if ctx.options.get(FAIL_FIRST_ATTEMPT) == "true" and info.attempt_number == 0 and out:
        # fault injection (tests): the first attempt dies after writing its files
        raise RuntimeError(f"injected failure of task attempt {info.write_token} ({FAIL_FIRST_ATTEMPT})")
    flag = ctx.options.get(FAIL_WHILE_EXISTS)
    if flag and out and os.path.exists(flag):
        raise RuntimeError(
            f"injected failure of task attempt {info.write_token} ({FAIL_WHILE_EXISTS}={flag})"
        )
    yield from out
