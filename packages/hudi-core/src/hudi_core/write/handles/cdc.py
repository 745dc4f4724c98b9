"""The change log of a base file rewrite on a table with ``hoodie.table.cdc.enabled``.

A merge handle (Apache Hudi's ``HoodieMergeHandleWithChangeLog``) records every row it updates
(``u``: the stored row before, the merged row after), deletes (``d``) and inserts (``i``); rows
copied as they were and incoming records that lose to the stored row are not changes. At the end
of the merge the changes go into one CDC log file beside the new base file
(:mod:`hudi_core.log.cdc`), in the supplemental logging mode of the table, and into the write
stat's ``cdcStats``. Apache Hudi writes no CDC file where the rewrite only appended inserts or
left no row; its CDC query then infers from the write stat that every row of the new file is an
insert, which loses the deletes of such a rewrite: this writer writes the file for every merge,
so the query reads what changed (an empty block where nothing did).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.table import cdc_logging_mode
from hudi_core.errors import StorageError
from hudi_core.log.cdc import cdc_avro_schema, encode_cdc_block
from hudi_core.table.file_names import LogFileName
from hudi_core.write.handles.append import rows_per_block
from hudi_core.write.handles.context import TaskAttempt, WriteContext

__all__ = ["ChangeLog", "combine_changes"]


class ChangeLog:
    """The changes one merge makes to its file group, as ``record_key``, ``op``, ``before``,
    ``after`` (images: structs of the table's data columns, null where there is none)."""

    def __init__(self, ctx: WriteContext, mode: str) -> None:
        self.ctx, self.mode = ctx, mode
        self.image = pa.struct(list(ctx.schema))
        self._pieces: list[pa.Table] = []

    @staticmethod
    def kept_by(ctx: WriteContext) -> ChangeLog | None:
        """The change log of a merge on ``ctx``'s table, None where the table keeps none."""
        mode = cdc_logging_mode(ctx.config)
        return ChangeLog(ctx, mode) if mode is not None else None

    def _images(self, rows: pa.Table | None, n: int) -> pa.Array:
        if rows is None:
            return pa.nulls(n, self.image)
        arrays = []
        for f in self.ctx.schema:
            col = rows.column(f.name).combine_chunks()
            arrays.append(col.cast(f.type) if col.type != f.type else col)
        return pa.StructArray.from_arrays(arrays, fields=list(self.ctx.schema))

    def add(self, op: str, keys: pa.Array, before: pa.Table | None, after: pa.Table | None) -> None:
        """``len(keys)`` changes of one kind; ``before`` / ``after``: their rows (data columns)."""
        n = len(keys)
        if n:
            self._pieces.append(pa.table({
                "record_key": keys.cast(pa.string()), "op": pa.repeat(pa.scalar(op), n),
                "before": self._images(before, n), "after": self._images(after, n),
            }))  # fmt: skip

    def inserted_rows_of(self, path: str) -> pa.Table:
        """Every row of ``path``, a base file this instant created, as an insert: the prior
        changes of a streamed write merging the file again (:func:`combine_changes`)."""
        from hudi_core.read.files import iter_parquet
        from hudi_core.schema.avro_schema import META_FIELDS
        from hudi_core.write.records import conform_to_schema

        for rows in iter_parquet(self.ctx.storage, path, None, 65536):
            data = conform_to_schema(rows, self.ctx.schema)
            self.add("i", rows.column(META_FIELDS[2]).combine_chunks(), None, data)
        return self.records()

    def records(self) -> pa.Table:
        schema = pa.schema([("record_key", pa.string()), ("op", pa.string()),
                            ("before", self.image), ("after", self.image)])  # fmt: skip
        return pa.concat_tables(self._pieces) if self._pieces else schema.empty_table()

    def write(self, partition: str, file_id: str, attempt: TaskAttempt, changes: pa.Table) -> dict[str, int]:
        """Write ``changes`` (:meth:`records`, or those combined with a streamed write's earlier
        ones) into the file group's CDC log file of the instant; returns the write stat's
        ``cdcStats``."""
        ctx = self.ctx
        schema = cdc_avro_schema(self.mode, ctx.avro_schema)
        columns = [f["name"] for f in schema["fields"]]
        if "ts_ms" in columns:
            changes = changes.append_column("ts_ms", pa.repeat(pa.scalar(ctx.instant), changes.num_rows))
        rows = changes.select(columns)
        step = rows_per_block(rows)
        data = b"".join(
            encode_cdc_block(rows.slice(start, step), schema, ctx.instant)
            for start in range(0, max(rows.num_rows, 1), step)
        )
        name = LogFileName(file_id, ctx.instant, 1, attempt.token, cdc=True).name
        ctx.markers.create(partition, name, "CREATE")
        path = f"{ctx.partition_uri(partition)}/{name}"
        if not ctx.storage.create_if_absent(path, data):
            raise StorageError(f"CDC log file {path} exists already (a duplicate write token?)")
        ctx.listings.created(ctx.partition_uri(partition), name)
        return {ctx.relative(partition, name): len(data)}


def combine_changes(earlier: pa.Table, later: pa.Table) -> pa.Table:
    """The changes of two merges of one file group in one instant (a streamed write merges a
    group again from the file it wrote): a key once, with its first ``before`` and its last
    ``after`` (an insert then a delete of a key is no change at all)."""
    both = pa.concat_tables([earlier, later])
    rows = pa.table({"key": both.column("record_key"),
                     "row": pa.array(np.arange(both.num_rows, dtype=np.int64))})  # fmt: skip
    firsts = rows.group_by("key", use_threads=False).aggregate([("row", "min"), ("row", "max")])
    order = pc.sort_indices(firsts.column("row_min"))
    first, last = firsts.column("row_min").take(order), firsts.column("row_max").take(order)
    before, after = both.column("before").take(first), both.column("after").take(last)
    had, has = pc.is_valid(before), pc.is_valid(after)
    op = pc.if_else(had, pc.if_else(has, "u", "d"), "i")
    out = pa.table({"record_key": both.column("record_key").take(first), "op": op,
                    "before": before, "after": after})  # fmt: skip
    return out.filter(pc.or_(had, has))
