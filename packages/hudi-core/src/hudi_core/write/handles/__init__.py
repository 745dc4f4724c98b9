"""Stage 5: write one bucket (file group) with the create, merge or append handle."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
from hudi_core.executor import executor_for
from hudi_core.write.bucket_assigner import APPEND, CREATE, MERGE, BucketInfo
from hudi_core.write.handles.append import NATURAL_DELETE, append_to_file_group
from hudi_core.write.handles.bulk import BulkInsertWriter
from hudi_core.write.handles.context import TaskAttempt, WriteContext, WriteStatus, live_records
from hudi_core.write.handles.create import write_new_file
from hudi_core.write.handles.merge import merge_file_group

__all__ = [
    "NATURAL_DELETE",
    "TaskAttempt",
    "WriteContext",
    "WriteStatus",
    "write_bucket",
    "write_in_input_order",
]

_BATCH_ROWS = 65536


def write_bucket(
    ctx: WriteContext,
    bucket: BucketInfo,
    records: pa.Table,
    *,
    task_id: int | None = None,
    attempt: TaskAttempt | None = None,
) -> list[WriteStatus]:
    """Write the records of one bucket; returns the write statuses of the files written.

    ``attempt`` names the task attempt (write token, seqnos); without it the task id (default:
    the bucket number) is both partition and attempt id of a local task."""
    tid: TaskAttempt | int = (
        attempt if attempt is not None else (bucket.number if task_id is None else task_id)
    )
    if bucket.io_type == CREATE:
        live = live_records(records)
        return write_new_file(ctx, bucket.partition_path, bucket.file_id, _batches(live), task_id=tid)
    assert bucket.base_instant is not None
    if bucket.io_type == MERGE:
        return merge_file_group(
            ctx, bucket.partition_path, bucket.file_id, bucket.base_instant, records, task_id=tid
        )
    if bucket.io_type == APPEND:
        return append_to_file_group(
            ctx, bucket.partition_path, bucket.file_id, bucket.base_instant, records, task_id=tid
        )
    raise ValueError(f"unknown bucket IO type {bucket.io_type!r}")


def write_in_input_order(ctx: WriteContext, records: pa.Table, *, attempt: TaskAttempt) -> list[WriteStatus]:
    """New records in input order (bulk_insert with ``hoodie.bulkinsert.sort.mode=NONE``): one
    open file per partition path, rolled over at ``hoodie.parquet.max.file.size`` of bytes
    written (core's :class:`BulkInsertWriter`), the rows handed to it by
    ``hoodie.write.executor.type``'s executor in batches, as a create handle's are."""
    with BulkInsertWriter(ctx, attempt=attempt) as writer:
        result: list[WriteStatus] = executor_for(ctx.config).execute(_batches(records), _same, writer)
    return result


def _same(rows: pa.Table) -> pa.Table:
    return rows


def _batches(table: pa.Table) -> Iterator[pa.Table]:
    for start in range(0, table.num_rows, _BATCH_ROWS):
        yield table.slice(start, _BATCH_ROWS)
