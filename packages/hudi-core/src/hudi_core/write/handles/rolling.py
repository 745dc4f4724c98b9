"""Streaming create handle: new records of one partition flushed batch by batch into an open
base file (one row group per flush), rolling to a new file group at
``hoodie.parquet.max.file.size``. Memory held: the current row group and the file's keys (for the
bloom filter and min/max keys written in the footer on close)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi_core.config.write import WriteOptions
from hudi_core.table.file_names import BaseFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    ensure_partition_metadata,
    meta_columns,
    with_meta,
)
from hudi_core.write.handles.parquet_out import file_table, footer_of, open_writer
from hudi_core.write.records import DELETE_FLAG, PARTITION_PATH, RECORD_KEY

__all__ = ["RollingCreateHandle"]


class _OpenFile:
    def __init__(self, ctx: WriteContext, partition: str, file_id: str, attempt: TaskAttempt) -> None:
        self.ctx, self.partition, self.file_id, self.attempt = ctx, partition, file_id, attempt
        self.name = BaseFileName(file_id, attempt.token, ctx.instant).name
        self.path = f"{ctx.partition_uri(partition)}/{self.name}"
        ctx.markers.create(partition, self.name, "CREATE")
        ensure_partition_metadata(ctx, partition)
        self._stack = contextlib.ExitStack()
        self._sink = self._stack.enter_context(ctx.storage.open_write(self.path))
        self._writer: pq.ParquetWriter | None = None
        self.keys: list[pa.Array] = []
        self.rows = 0
        self.footer: dict[str, str] = {}

    def write(self, data: pa.Table) -> None:
        ctx = self.ctx
        metas = meta_columns(
            data.num_rows, instant=ctx.instant, task_id=self.attempt.partition_id,
            record_keys=data.column(RECORD_KEY), partitions=data.column(PARTITION_PATH), file_name=self.name,
            seqno_start=self.rows,
        )  # fmt: skip
        table = file_table(
            with_meta(data, metas, ctx.schema), ctx.avro_schema, populate_meta_fields=ctx.populate_meta_fields
        )
        if self._writer is None:
            self._writer = open_writer(
                self._sink, table, str(ctx.config.get_str(WriteOptions.PARQUET_COMPRESSION))
            )
        self._writer.write_table(table, row_group_size=max(1, table.num_rows))
        if ctx.populate_meta_fields:
            self.keys.append(table.column(RECORD_KEY).combine_chunks())
        self.rows += table.num_rows

    def bytes_written(self) -> int:
        try:
            return int(self._sink.tell())
        except (OSError, AttributeError, ValueError):
            return 0

    def close(self) -> WriteStatus:
        ctx = self.ctx
        # without meta fields: no bloom filter, no min/max keys (spec 6.1)
        keys = pa.chunked_array(self.keys, pa.string()) if ctx.populate_meta_fields else None
        footer = self.footer = footer_of(keys, ctx.avro_schema_with_meta, ctx.config)
        assert self._writer is not None
        self._writer.add_key_value_metadata(footer)
        self._writer.close()
        self._stack.close()
        self.keys = []
        size = ctx.storage.size(self.path)
        stat = WriteStat(
            file_id=self.file_id, path=ctx.relative(self.partition, self.name), partition_path=self.partition,
            prev_commit="null", num_writes=self.rows, num_inserts=self.rows, total_write_bytes=size,
            file_size_in_bytes=size, runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
        )  # fmt: skip
        return WriteStatus(stat, "CREATE", inserted=self.rows)


class RollingCreateHandle:
    """``write(records)`` per buffer flush; ``close()`` returns the statuses of the files written.

    ``on_file(partition, file_id, keys)`` is told which keys went to which new file group (the
    streamed write's in-instant index); ``on_closed(partition, file_id, path, footer)`` when a
    file is closed (its footer: min/max keys and bloom filter)."""

    def __init__(
        self, ctx: WriteContext, partition: str, *, next_attempt: Callable[[], TaskAttempt],
        on_file: Callable[[str, str, pa.Array], Any] | None = None,
        on_close: Callable[[WriteStatus], Any] | None = None,
        on_closed: Callable[[str, str, str, dict[str, str]], Any] | None = None,
    ) -> None:  # fmt: skip
        self.ctx = ctx
        self.partition = partition
        self.max_size = int(ctx.config.get(WriteOptions.PARQUET_MAX_FILE_SIZE))
        self._next_attempt = next_attempt
        self._on_file = on_file
        self._on_close = on_close
        self._on_closed = on_closed
        self._open: _OpenFile | None = None
        self.statuses: list[WriteStatus] = []

    @property
    def open_file(self) -> tuple[str, str] | None:
        """``(file id, path)`` of the file being written, if any."""
        return None if self._open is None else (self._open.file_id, self._open.path)

    @property
    def open_keys(self) -> list[pa.Array] | None:
        """Keys written so far into the open file (kept for its bloom filter; None without meta
        fields or an open file): a streamed write's in-instant index probes them, no copy."""
        return self._open.keys if self._open is not None and self.ctx.populate_meta_fields else None

    def write(self, records: pa.Table) -> None:
        live = records.filter(pc.invert(records.column(DELETE_FLAG)))
        if live.num_rows == 0:
            return
        if self._open is None:
            self._open = _OpenFile(self.ctx, self.partition, f"{uuid.uuid4()}-0", self._next_attempt())
        f = self._open
        f.write(live)
        if self._on_file is not None:
            self._on_file(self.partition, f.file_id, live.column(RECORD_KEY))
        if f.bytes_written() >= self.max_size:
            self.roll()

    def roll(self) -> None:
        """Close the current file; the next write starts a new file group."""
        if self._open is not None:
            f = self._open
            status = f.close()
            self._open = None
            if self._on_closed is not None:
                self._on_closed(self.partition, f.file_id, f.path, f.footer)
            self.statuses.append(status)
            if self._on_close is not None:
                self._on_close(status)

    def close(self) -> list[WriteStatus]:
        self.roll()
        return self.statuses
