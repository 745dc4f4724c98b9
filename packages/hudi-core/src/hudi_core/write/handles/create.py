"""Create handle: new records of a new file group -> one base file (driven by the executor)."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.parquet as pq
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

__all__ = ["CreateHandle", "encoded_record_size", "new_records", "write_new_file"]


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
        ctx.listings.created(ctx.partition_uri(self.partition), self.name)
        ensure_partition_metadata(ctx, self.partition)
        table = new_records(ctx, data, task_id=self.task_id, file_name=self.name)
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


def new_records(
    ctx: WriteContext, data: pa.Table, *, task_id: int, file_name: str, seqno_start: int = 0
) -> pa.Table:
    """New records of ``data`` as a base file named ``file_name`` holds them: meta columns first
    (seqnos from ``seqno_start``: a file written piece by piece continues its count; the commit
    time and file name as one-entry dictionaries, see ``context.constant_strings``)."""
    metas = meta_columns(
        data.num_rows, instant=ctx.instant, task_id=task_id, record_keys=data.column(RECORD_KEY),
        partitions=data.column(PARTITION_PATH), file_name=file_name, seqno_start=seqno_start,
        constants_as_dictionary=True,
    )  # fmt: skip
    return with_meta(data, metas, ctx.schema)


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


#: rows of a bulk_insert's input encoded to learn its parquet bytes per record
SIZE_SAMPLE_ROWS = 16384


def encoded_record_size(ctx: WriteContext, data: pa.Table) -> int:
    """Parquet bytes per record of ``data`` (a write's prepared rows) as a base file holds them:
    its first :data:`SIZE_SAMPLE_ROWS` rows with their meta columns, encoded in memory with the
    table's codec (data pages only: no footer, no bloom filter).

    Apache Hudi's bulk_insert rolls each file over at ``hoodie.parquet.max.file.size`` of bytes
    actually written, whatever the record size estimate says; planning its file groups with this
    size gives files of about that size (a sample of a few thousand rows compresses a little
    worse than a whole file: the files come out a little smaller, never larger)."""
    import io

    sample = data.slice(0, min(data.num_rows, SIZE_SAMPLE_ROWS))
    if sample.num_rows == 0:
        return 1
    name = BaseFileName("00000000-0000-0000-0000-000000000000-0", "0-0-0", ctx.instant).name
    table = parquet_out.file_table(
        new_records(ctx, sample, task_id=0, file_name=name),
        ctx.avro_schema,
        populate_meta_fields=bool(ctx.populate_meta_fields),
    )
    sink = io.BytesIO()
    with parquet_out.open_writer(sink, table, ctx.config) as writer:
        writer.write_table(table)
    data_bytes = parquet_out.data_bytes(pq.ParquetFile(io.BytesIO(sink.getvalue())).metadata)
    return max(1, -(-data_bytes // sample.num_rows))


def _identity(x: pa.Table) -> pa.Table:
    return x
