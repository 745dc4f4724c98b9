"""bulk_insert as a stream: a task's new records written while they arrive, one rolling base file
per partition (Apache Hudi's bulk_insert with ``hoodie.bulkinsert.sort.mode=NONE``: each task
keeps a file open per partition path and rolls it over at ``hoodie.parquet.max.file.size``).

Rows are gathered per partition into row groups of about ``flush_bytes`` (Arrow bytes); a
partition's row group is encoded and written as soon as it is gathered. Memory is bounded by the
gathered rows (at most ``buffer_bytes``: past that, the largest partition's are written) and the
open files' keys, not by the task's rows. In a Spark task the rows come from the JVM batch by
batch, and the JVM converts the next batch while Python encodes this one.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType

import numpy as np
import pyarrow as pa
from hudi_core.write.handles.context import TaskAttempt, WriteContext, WriteStatus
from hudi_core.write.handles.create import encoded_record_size
from hudi_core.write.handles.rolling import RollingCreateHandle
from hudi_core.write.records import PARTITION_PATH

__all__ = ["BUFFER_BYTES", "FLUSH_BYTES", "BulkInsertWriter"]

#: a partition's rows gathered into one row group (Arrow bytes)
FLUSH_BYTES = 8 * 1024 * 1024
#: all partitions' gathered rows: past this, the largest partition's rows are written
BUFFER_BYTES = 64 * 1024 * 1024
#: incoming rows routed to their partitions this many Arrow bytes at a time
_ROUTE_BYTES = 4 * 1024 * 1024


class BulkInsertWriter:
    """``add`` a task's prepared rows (record key and partition path columns), then ``close``
    for the write statuses of every file written. Used as a context manager, an error closes
    the open files without Hudi's footer keys (left to the rollback of the failed instant, which
    finds them by their markers, as any file of a failed write).

    Files of one partition hold its rows in input order; each file's seqnos count its own rows,
    as the create handle's do. The file size limit is applied with the parquet bytes per record
    measured on the first rows (core's ``encoded_record_size``), then each file's own."""

    def __init__(
        self,
        ctx: WriteContext,
        *,
        attempt: TaskAttempt,
        flush_bytes: int = FLUSH_BYTES,
        buffer_bytes: int = BUFFER_BYTES,
    ) -> None:
        self.ctx = ctx
        self._attempt = attempt
        self._flush_bytes = flush_bytes
        self._buffer_bytes = buffer_bytes
        self._handles: dict[str, RollingCreateHandle] = {}
        self._gathered: dict[str, list[pa.Table]] = {}
        self._gathered_bytes: dict[str, int] = {}
        self._incoming: list[pa.Table] = []
        self._incoming_bytes = 0
        self._record_size: int | None = None

    def __enter__(self) -> BulkInsertWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if error is not None:
            self.abort()

    def add(self, rows: pa.Table | pa.RecordBatch) -> None:
        if rows.num_rows == 0:
            return
        table = pa.Table.from_batches([rows]) if isinstance(rows, pa.RecordBatch) else rows
        self._incoming.append(table)
        self._incoming_bytes += table.nbytes
        if self._incoming_bytes >= min(_ROUTE_BYTES, self._flush_bytes, self._buffer_bytes):
            self._route()

    def add_all(self, batches: Iterable[pa.Table | pa.RecordBatch]) -> None:
        for rows in batches:
            self.add(rows)

    def consume(self, rows: pa.Table | pa.RecordBatch) -> None:
        """:meth:`add`, as an executor's consumer (``hudi_core.executor.Consumer``)."""
        self.add(rows)

    def finish(self) -> list[WriteStatus]:
        """:meth:`close`, as an executor's consumer."""
        return self.close()

    def close(self) -> list[WriteStatus]:
        """Write what is gathered, close every open file; the statuses of all files written."""
        self._route()
        for partition in list(self._gathered):
            self._flush(partition)
        statuses = [s for handle in self._handles.values() for s in handle.close()]
        self._handles.clear()
        return statuses

    def abort(self) -> None:
        """Close the open files without Hudi's footer keys; gathered rows are dropped."""
        for handle in self._handles.values():
            handle.abort()
        self._handles.clear()
        self._gathered.clear()
        self._gathered_bytes.clear()
        self._incoming = []

    def _route(self) -> None:
        """Incoming rows to their partitions' gathered rows (copies: a gathered piece must not
        pin the whole incoming table), writing any partition whose rows make a row group."""
        if not self._incoming:
            return
        table = pa.concat_tables(self._incoming)
        self._incoming, self._incoming_bytes = [], 0
        parts = table.column(PARTITION_PATH).combine_chunks().dictionary_encode()
        names = parts.dictionary.to_pylist()
        if len(names) == 1:
            self._gather(names[0], table)
        else:
            codes = parts.indices.to_numpy(zero_copy_only=False)
            order = np.argsort(codes, kind="stable")
            sorted_codes = codes[order]
            bounds = np.flatnonzero(np.diff(sorted_codes)) + 1
            starts = np.concatenate([[0], bounds])
            ends = np.concatenate([bounds, [len(order)]])
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
                self._gather(names[int(sorted_codes[s])], table.take(pa.array(order[s:e])))
        del table
        while sum(self._gathered_bytes.values()) > self._buffer_bytes:
            self._flush(max(self._gathered_bytes, key=self._gathered_bytes.__getitem__))

    def _gather(self, partition: str, rows: pa.Table) -> None:
        self._gathered.setdefault(partition, []).append(rows)
        size = self._gathered_bytes[partition] = self._gathered_bytes.get(partition, 0) + rows.nbytes
        if size >= self._flush_bytes:
            self._flush(partition)

    def _flush(self, partition: str) -> None:
        rows = pa.concat_tables(self._gathered.pop(partition))
        self._gathered_bytes.pop(partition, None)
        if self._record_size is None:
            # parquet bytes per record, for cutting files at the size limit (Hudi's bulk_insert
            # rolls a file at bytes written, not at the insert record size estimate)
            self._record_size = encoded_record_size(self.ctx, rows)
        handle = self._handles.get(partition)
        if handle is None:
            attempt = self._attempt
            handle = self._handles[partition] = RollingCreateHandle(
                self.ctx, partition, next_attempt=lambda: attempt, record_size=self._record_size
            )
        handle.write(rows)
