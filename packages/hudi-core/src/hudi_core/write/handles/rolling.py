"""Streaming create handle: new records of one partition flushed batch by batch into an open
base file (one row group per flush), rolling to a new file group at
``hoodie.parquet.max.file.size``. Memory held: the current row group, the file's bloom filter
(keys added as they are written) and its keys (min/max keys in the footer on close, and the
streamed write's in-instant index)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hudi_core.config.write import WriteOptions
from hudi_core.table.file_names import BaseFileName
from hudi_core.timeline.commit_metadata import WriteStat
from hudi_core.write.handles.context import (
    TaskAttempt,
    WriteContext,
    WriteStatus,
    ensure_partition_metadata,
    live_records,
)
from hudi_core.write.handles.create import new_records
from hudi_core.write.handles.parquet_out import (
    file_table,
    footer_of,
    new_bloom_filter,
    open_writer,
    written_size,
)
from hudi_core.write.records import RECORD_KEY

__all__ = ["RollingCreateHandle"]

#: rows of an open file from which its own bytes per record replace the ``record_size`` estimate
_MEASURED_ROWS = 4096
#: a row group of fewer rows than the ones measured costs a little more per record (its page
#: headers, dictionaries and compression windows are shared by fewer rows: ~1% from a 16k-row
#: sample to a 9.5k-row file), so the room left is counted at this much more per record
_SMALLER_GROUP_MARGIN = 1.02


class _OpenFile:
    def __init__(self, ctx: WriteContext, partition: str, file_id: str, attempt: TaskAttempt) -> None:
        self.ctx, self.partition, self.file_id, self.attempt = ctx, partition, file_id, attempt
        self.name = BaseFileName(file_id, attempt.token, ctx.instant).name
        self.path = f"{ctx.partition_uri(partition)}/{self.name}"
        ctx.markers.create(partition, self.name, "CREATE")
        ctx.listings.created(ctx.partition_uri(partition), self.name)
        ensure_partition_metadata(ctx, partition)
        self._stack = contextlib.ExitStack()
        self._sink = self._stack.enter_context(ctx.storage.open_write(self.path))
        self._writer: pq.ParquetWriter | None = None
        self.keys: list[pa.Array] = []
        self.bloom = new_bloom_filter(ctx.config) if ctx.populate_meta_fields else None
        self.rows = 0
        self.footer: dict[str, str] = {}

    def write(self, data: pa.Table) -> None:
        ctx = self.ctx
        records = new_records(
            ctx, data, task_id=self.attempt.partition_id, file_name=self.name, seqno_start=self.rows
        )
        table = file_table(records, ctx.avro_schema, populate_meta_fields=ctx.populate_meta_fields)
        if self._writer is None:
            self._writer = open_writer(self._sink, table, ctx.config)
        self._writer.write_table(table, row_group_size=max(1, table.num_rows))
        if self.bloom is not None:
            keys = table.column(RECORD_KEY).combine_chunks()
            self.bloom.add(keys)
            self.keys.append(keys)
        self.rows += table.num_rows

    def bytes_written(self) -> int:
        return written_size(self._sink) or 0

    def abort(self) -> None:
        for close in (self._writer.close if self._writer is not None else None, self._stack.close):
            if close is not None:
                with contextlib.suppress(Exception):
                    close()
        self._writer, self.keys, self.bloom = None, [], None

    def close(self) -> WriteStatus:
        ctx = self.ctx
        # without meta fields: no bloom filter, no min/max keys (spec 6.1)
        keys = pa.chunked_array(self.keys, pa.string()) if ctx.populate_meta_fields else None
        footer = self.footer = footer_of(keys, ctx.avro_schema_with_meta, ctx.config, bloom=self.bloom)
        assert self._writer is not None
        self._writer.add_key_value_metadata(footer)
        self._writer.close()
        size = written_size(self._sink)
        self._stack.close()
        self.keys, self.bloom = [], None
        if size is None:
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
    file is closed (its footer: min/max keys and bloom filter).

    A file is rolled over once its bytes written reach ``hoodie.parquet.max.file.size``. With
    ``record_size`` (parquet bytes per record, as measured on the write's rows) a write that
    would take the file past the limit is cut where the file is full, as Apache Hudi's
    bulk_insert checks the file's size before each record: the rest starts the next file. The
    open file's own bytes per record replace the estimate once it holds a few thousand rows.
    Without ``record_size`` a file is only rolled after the write that fills it."""

    def __init__(
        self, ctx: WriteContext, partition: str, *, next_attempt: Callable[[], TaskAttempt],
        record_size: int | None = None,
        on_file: Callable[[str, str, pa.Array], Any] | None = None,
        on_close: Callable[[WriteStatus], Any] | None = None,
        on_closed: Callable[[str, str, str, dict[str, str]], Any] | None = None,
    ) -> None:  # fmt: skip
        self.ctx = ctx
        self.partition = partition
        self.max_size = int(ctx.config.get(WriteOptions.PARQUET_MAX_FILE_SIZE))
        self._next_attempt = next_attempt
        self._record_size = record_size
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
        live = live_records(records)
        while live.num_rows:
            if self._open is None:
                self._open = _OpenFile(self.ctx, self.partition, f"{uuid.uuid4()}-0", self._next_attempt())
            f = self._open
            room = self._room(f)
            piece = live if room >= live.num_rows else live.slice(0, room)
            f.write(piece)
            if self._on_file is not None:
                self._on_file(self.partition, f.file_id, piece.column(RECORD_KEY))
            live = live.slice(piece.num_rows)
            if live.num_rows or f.bytes_written() >= self.max_size:
                self.roll()

    def _room(self, f: _OpenFile) -> int:
        """Records the open file takes before it reaches the size limit (at least one)."""
        if not self._record_size:
            return 1 << 62  # no estimate: the file rolls after the write that fills it
        written = f.bytes_written() if f.rows else 0
        # a few rows' bytes are mostly per-row-group overhead: measure once there are enough
        per_record = written / f.rows if f.rows >= _MEASURED_ROWS and written else self._record_size
        return max(1, int((self.max_size - written) / (per_record * _SMALLER_GROUP_MARGIN)))

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

    def abort(self) -> None:
        """Close the open file without Hudi's footer keys (a failed write's file: the rollback
        of the instant deletes it by its marker)."""
        if self._open is not None:
            self._open.abort()
            self._open = None
