"""Create handle: new records of a new file group -> one base file (driven by the executor)."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
from hudi_core.executor import executor_for
from hudi_core.table.file_names import BaseFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles import parquet_out
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    as_attempt,
    ensure_partition_metadata,
    meta_columns,
    with_meta,
)
from hudi_core.write.records import PARTITION_PATH, RECORD_KEY

__all__ = ["CreateHandle", "write_new_file"]


class CreateHandle:
    """Executor consumer: collects record batches, writes the base file on ``finish``."""

    def __init__(self, ctx: WriteContext, partition: str, file_id: str, task_id: TaskAttempt | int) -> None:
        self.ctx = ctx
        self.partition = partition
        self.file_id = file_id
        attempt = as_attempt(task_id, ctx.stage_id)
        self.task_id = attempt.partition_id
        self.token = attempt.token
        self.name = BaseFileName(file_id, self.token, ctx.instant).name
        self._batches: list[pa.Table] = []

    def consume(self, item: pa.Table) -> None:
        if item.num_rows:
            self._batches.append(item)

    def finish(self) -> list[WriteStatus]:
        data = pa.concat_tables(self._batches) if self._batches else None
        self._batches = []
        if data is None or data.num_rows == 0:
            return []
        ctx = self.ctx
        ctx.markers.create(self.partition, self.name, "CREATE")
        ensure_partition_metadata(ctx, self.partition)
        metas = meta_columns(
            data.num_rows, instant=ctx.instant, task_id=self.task_id,
            record_keys=data.column(RECORD_KEY), partitions=data.column(PARTITION_PATH), file_name=self.name,
        )  # fmt: skip
        table = with_meta(data, metas, ctx.schema)
        path = f"{ctx.partition_uri(self.partition)}/{self.name}"
        res = parquet_out.write_parquet(ctx, path, table)
        n = data.num_rows
        stat = WriteStat(
            file_id=self.file_id, path=ctx.relative(self.partition, self.name), partition_path=self.partition,
            prev_commit="null", num_writes=n, num_inserts=n, total_write_bytes=res.size,
            file_size_in_bytes=res.size,
            runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
        )  # fmt: skip
        return [WriteStatus(stat, "CREATE", inserted=n)]


def write_new_file(
    ctx: WriteContext,
    partition: str,
    file_id: str,
    batches: Iterable[pa.Table],
    *,
    task_id: TaskAttempt | int,
) -> list[WriteStatus]:
    """Drive a create handle over ``batches`` through ``hoodie.write.executor.type``."""
    handle = CreateHandle(ctx, partition, file_id, task_id)
    result: list[WriteStatus] = executor_for(ctx.config).execute(iter(batches), _identity, handle)
    return result


def _identity(x: pa.Table) -> pa.Table:
    return x
